package jsonconv

import "golang.org/x/sys/cpu"

// hasAVX2 selects plainASCII32, which checks 32 bytes per step: a string value's long runs of plain
// bytes are most of what the converter's check reads.
var hasAVX2 = cpu.X86.HasAVX2

// plainASCII32 returns how many of b's leading bytes, 32 at a time, are plain (plainByte): the index
// of the first byte that is not, or a multiple of 32 where fewer than 32 bytes are left.
//
//go:noescape
func plainASCII32(b []byte) int
