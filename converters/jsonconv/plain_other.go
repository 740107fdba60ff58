//go:build !amd64

package jsonconv

const hasAVX2 = false

func plainASCII32(b []byte) int { return 0 }
