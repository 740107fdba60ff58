#include "textflag.h"

// func plainASCII32(b []byte) int
TEXT ·plainASCII32(SB), NOSPLIT, $0-32
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), DX
	XORQ AX, AX
	CMPQ DX, $32
	JB   done
	MOVL $0x20, R8
	MOVQ R8, X1
	VPBROADCASTB X1, Y1 // bytes below 0x20, and from 0x80 on (negative), are less than it signed
	MOVL $0x22, R8
	MOVQ R8, X2
	VPBROADCASTB X2, Y2 // '"'
	MOVL $0x5c, R8
	MOVQ R8, X3
	VPBROADCASTB X3, Y3 // '\\'
	SUBQ $32, DX        // the last index a 32-byte step may start at
loop:
	VMOVDQU (SI)(AX*1), Y0
	VPCMPGTB Y0, Y1, Y4 // 0x20 > byte, signed
	VPCMPEQB Y0, Y2, Y5
	VPCMPEQB Y0, Y3, Y6
	VPOR Y4, Y5, Y5
	VPOR Y5, Y6, Y6
	VPMOVMSKB Y6, CX
	TESTL CX, CX
	JNZ  stop
	ADDQ $32, AX
	CMPQ AX, DX
	JBE  loop
	VZEROUPPER
done:
	MOVQ AX, ret+24(FP)
	RET
stop:
	TZCNTL CX, CX
	ADDQ CX, AX
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET
