package main

// The program's own output, checked.
func Example() {
	main()
	// Output:
	// 4-bit weights, 32x256 @ 256x64 in groups of 64: out[0, :3] = [0.8698 0.3207 0.1706]
	// weights in 9216 bytes (f32: 65536)
	// the dequantized product's within 1e-4: true
	// relative error against the f32 weights (quantization): 0.106
}
