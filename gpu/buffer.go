package gpu

import (
	"fmt"
	"unsafe"

	"github.com/p2ptrace/p2ptrace/recorder/trace"
)

// Dtype is the element type of a Buffer.
type Dtype = trace.Dtype

// The element types a Buffer can hold.
const (
	Uint8   = trace.Uint8
	Int32   = trace.Int32
	Int64   = trace.Int64
	Float32 = trace.Float32
	Float64 = trace.Float64
)

// Buffer is device memory of one rank: count elements of one dtype. Host code
// fills and checks it through the typed views; communication calls move it.
type Buffer struct {
	alloc uint32
	dtype Dtype
	off   int    // byte offset in the allocation
	count int    // elements
	data  []byte // exactly this buffer's bytes
}

// Alloc allocates a zeroed buffer of count elements of dtype on this rank.
func (r *Rank) Alloc(dtype Dtype, count int) *Buffer {
	size := dtype.Size()
	if size == 0 || count < 0 {
		panic(fmt.Sprintf("gpu: Alloc(%v, %d): invalid dtype or count", dtype, count))
	}
	n := count * size
	words := make([]uint64, (n+7)/8) // 8-byte aligned for every typed view
	var data []byte
	if n > 0 {
		data = unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), n)
	}
	r.allocs++
	return &Buffer{alloc: r.allocs, dtype: dtype, count: count, data: data}
}

// Dtype is the element type.
func (b *Buffer) Dtype() Dtype { return b.dtype }

// Len is the number of elements.
func (b *Buffer) Len() int { return b.count }

// Size is the length in bytes.
func (b *Buffer) Size() int { return len(b.data) }

// Slice returns the view of n elements starting at element off. It shares memory with b.
func (b *Buffer) Slice(off, n int) *Buffer {
	if off < 0 || n < 0 || off+n > b.count {
		panic(fmt.Sprintf("gpu: Slice(%d, %d) of a buffer of %d elements", off, n, b.count))
	}
	s := b.dtype.Size()
	return &Buffer{alloc: b.alloc, dtype: b.dtype, off: b.off + off*s, count: n, data: b.data[off*s : (off+n)*s : (off+n)*s]}
}

// Bytes is the raw view of the buffer.
func (b *Buffer) Bytes() []byte { return b.data }

func view[T any](b *Buffer, want Dtype) []T {
	if b.dtype != want {
		panic(fmt.Sprintf("gpu: %s view of a %s buffer", want, b.dtype))
	}
	if b.count == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b.data[0])), b.count)
}

// Float32s is the host view of a Float32 buffer.
func (b *Buffer) Float32s() []float32 { return view[float32](b, Float32) }

// Float64s is the host view of a Float64 buffer.
func (b *Buffer) Float64s() []float64 { return view[float64](b, Float64) }

// Int32s is the host view of an Int32 buffer.
func (b *Buffer) Int32s() []int32 { return view[int32](b, Int32) }

// Int64s is the host view of an Int64 buffer.
func (b *Buffer) Int64s() []int64 { return view[int64](b, Int64) }

// Uint8s is the host view of a Uint8 buffer.
func (b *Buffer) Uint8s() []uint8 { return view[uint8](b, Uint8) }
