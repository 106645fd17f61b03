package xla

import (
	"math"
	"testing"
)

func TestHalfPrecisionConversions(t *testing.T) {
	cases := []struct {
		f    float32
		bf16 BF16
		f16  F16
	}{
		{1, 0x3f80, 0x3c00},
		{-2, 0xc000, 0xc000},
		{65504, 0x4780, 0x7bff},
		{float32(math.Inf(1)), 0x7f80, 0x7c00},
		{1e-8, 0x322c, 0x0000},          // below f16's smallest subnormal: rounds to zero
		{5.9604645e-08, 0x3380, 0x0001}, // f16's smallest subnormal
	}
	for _, c := range cases {
		if got := BF16FromFloat32(c.f); got != c.bf16 {
			t.Errorf("BF16FromFloat32(%g) = %#x, want %#x", c.f, got, c.bf16)
		}
		if got := F16FromFloat32(c.f); got != c.f16 {
			t.Errorf("F16FromFloat32(%g) = %#x, want %#x", c.f, got, c.f16)
		}
		if c.f16 != 0 {
			if back := c.f16.Float32(); back != c.f {
				t.Errorf("F16(%#x).Float32() = %g, want %g", c.f16, back, c.f)
			}
		}
	}
	if v := F16FromFloat32(float32(math.NaN())).Float32(); v == v {
		t.Errorf("NaN did not survive f16")
	}
	for _, d := range AllDTypes() {
		if d.String() == "" || d.HostBytes() == 0 {
			t.Errorf("%v has no name or size", d)
		}
	}
}
