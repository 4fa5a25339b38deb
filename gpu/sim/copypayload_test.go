package sim

import "testing"

// A negative size (a damaged or erroneous trace) copies nothing; it used to
// panic with "slice bounds out of range [:-4]".
func TestCopyPayloadNegativeSize(t *testing.T) {
	dst, src := []byte{1, 2, 3, 4}, []byte{5, 6, 7, 8}
	copyPayload(dst, src, -4)
	if string(dst) != "\x01\x02\x03\x04" {
		t.Errorf("dst %v", dst)
	}
	copyPayload(dst, src, 2)
	if string(dst) != "\x05\x06\x03\x04" {
		t.Errorf("dst %v", dst)
	}
}
