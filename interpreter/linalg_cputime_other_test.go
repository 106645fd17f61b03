//go:build !unix

package interpreter

import "time"

// laCPUTime is not measured on this platform.
func laCPUTime() time.Duration { return 0 }
