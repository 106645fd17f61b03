package pjrt

import "github.com/halo-ml/halo/interpreter"

// The built-in interpreter is always available as the plugin
// "interpreter" (Open("interpreter")), and it is what Open("") uses when no
// PJRT C plugin is found. Its client options are DeviceCount (or
// CPUDeviceCount) for the number of simulated devices and
// "collective_timeout_ms" for how long a device waits for its peers at a
// collective. See package interpreter for what it runs.
func init() { Register(interpreter.BackendName, interpreter.OpenBackend) }
