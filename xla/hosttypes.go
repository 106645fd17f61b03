package xla

// BF16 is a bfloat16 value stored as its 16 bits (the top half of a
// float32), for host buffers of BFloat16 elements.
type BF16 uint16

// F16 is an IEEE half-precision value stored as its 16 bits, for host
// buffers of Float16 elements.
type F16 uint16
