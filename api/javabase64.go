package api

import (
	"errors"
	"strconv"
)

// javaBase64Decode decodes like java.util.Base64.getDecoder().decode(String) (RFC 4648, no line breaks), with
// its exact error messages: the worker answers them in 500s (a malformed Authorization header, a malformed
// internal request signature).
func javaBase64Decode(s string) ([]byte, error) {
	src := []byte(s)
	sl := len(src)
	if sl == 0 {
		return []byte{}, nil
	}
	if sl < 2 {
		return nil, errors.New("Input byte[] should at least have 2 bytes for base64 bytes")
	}
	var dst []byte
	bits, shiftto, sp := 0, 18, 0
	for sp < sl {
		c := src[sp]
		sp++
		b := base64Value(c)
		if b < 0 {
			if b == -2 { // '='
				if shiftto == 6 && (sp == sl || func() bool { n := src[sp]; sp++; return n != '=' }()) || shiftto == 18 {
					return nil, errors.New("Input byte array has wrong 4-byte ending unit")
				}
				break
			}
			return nil, errors.New("Illegal base64 character " + strconv.FormatInt(int64(int8(c)), 16))
		}
		bits |= b << shiftto
		shiftto -= 6
		if shiftto < 0 {
			dst = append(dst, byte(bits>>16), byte(bits>>8), byte(bits))
			shiftto, bits = 18, 0
		}
	}
	switch shiftto {
	case 6:
		dst = append(dst, byte(bits>>16))
	case 0:
		dst = append(dst, byte(bits>>16), byte(bits>>8))
	case 12:
		return nil, errors.New("Last unit does not have enough valid bits")
	}
	if sp < sl {
		return nil, errors.New("Input byte array has incorrect ending byte at " + strconv.Itoa(sp))
	}
	return dst, nil
}

// base64Value is Base64.Decoder's fromBase64 table: the 6-bit value, -2 for '=', -1 otherwise.
func base64Value(c byte) int {
	switch {
	case c >= 'A' && c <= 'Z':
		return int(c - 'A')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 26
	case c >= '0' && c <= '9':
		return int(c-'0') + 52
	case c == '+':
		return 62
	case c == '/':
		return 63
	case c == '=':
		return -2
	}
	return -1
}
