package apacheevents

import (
	"errors"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// appendJavaUTF appends s as Java's DataOutput.writeUTF writes it: a big-endian uint16 byte length, then
// modified UTF-8 (U+0000 in two bytes, characters outside the BMP as two three-byte surrogates).
func appendJavaUTF(dst []byte, s []byte) ([]byte, error) {
	if !utf8.Valid(s) {
		return nil, errors.New("schema is not valid UTF-8")
	}
	start := len(dst)
	dst = append(dst, 0, 0)
	for _, r := range string(s) {
		if r >= 0x10000 {
			hi, lo := utf16.EncodeRune(r)
			dst = appendUTF16Unit(dst, uint16(hi))
			dst = appendUTF16Unit(dst, uint16(lo))
			continue
		}
		dst = appendUTF16Unit(dst, uint16(r))
	}
	n := len(dst) - start - 2
	if n > 0xFFFF {
		return nil, fmt.Errorf("schema of %d bytes exceeds writeUTF's 65535", n)
	}
	dst[start], dst[start+1] = byte(n>>8), byte(n)
	return dst, nil
}

func appendUTF16Unit(dst []byte, c uint16) []byte {
	switch {
	case c >= 1 && c <= 0x7F:
		return append(dst, byte(c))
	case c <= 0x7FF:
		return append(dst, 0xC0|byte(c>>6), 0x80|byte(c&0x3F))
	default:
		return append(dst, 0xE0|byte(c>>12), 0x80|byte((c>>6)&0x3F), 0x80|byte(c&0x3F))
	}
}

// readJavaUTF reads a DataInput.readUTF string from the start of b and returns it as UTF-8 with the bytes
// it took; malformed input is an error, as in Java.
func readJavaUTF(b []byte) (string, int, error) {
	if len(b) < 2 {
		return "", 0, errShort
	}
	n := int(b[0])<<8 | int(b[1])
	if len(b) < 2+n {
		return "", 0, fmt.Errorf("schema of %d bytes, %d left", n, len(b)-2)
	}
	in := b[2 : 2+n]
	units := make([]uint16, 0, n)
	for i := 0; i < len(in); {
		c := in[i]
		switch {
		case c < 0x80:
			units = append(units, uint16(c))
			i++
		case c>>5 == 0x6:
			if i+1 >= len(in) || in[i+1]>>6 != 0x2 {
				return "", 0, fmt.Errorf("malformed modified UTF-8 at byte %d", i)
			}
			units = append(units, uint16(c&0x1F)<<6|uint16(in[i+1]&0x3F))
			i += 2
		case c>>4 == 0xE:
			if i+2 >= len(in) || in[i+1]>>6 != 0x2 || in[i+2]>>6 != 0x2 {
				return "", 0, fmt.Errorf("malformed modified UTF-8 at byte %d", i)
			}
			units = append(units, uint16(c&0x0F)<<12|uint16(in[i+1]&0x3F)<<6|uint16(in[i+2]&0x3F))
			i += 3
		default:
			return "", 0, fmt.Errorf("malformed modified UTF-8 at byte %d", i)
		}
	}
	return string(utf16.Decode(units)), 2 + n, nil
}
