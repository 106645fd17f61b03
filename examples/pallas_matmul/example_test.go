package main

// The program's own output, checked.
func Example() {
	main()
	// Output:
	// gelu(x @ y)[0, :4] = [-0.1412 -0.1519 -0.0536 -0.0421]
}
