#include "textflag.h"

// func callerPC() uintptr
// Returns the return address of the function that called callerPC, read from
// that function's frame record: a leaf with a zero-size frame does not push
// BP, so BP still points at the caller's frame, whose +8 is its return address.
TEXT ·callerPC(SB), NOSPLIT, $0-8
	MOVQ 8(BP), AX
	MOVQ AX, ret+0(FP)
	RET
