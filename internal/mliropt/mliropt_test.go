package mliropt_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/internal/mliropt"
)

func TestRun(t *testing.T) {
	opt := mliropt.Path()
	if opt == "" {
		t.Skip(mliropt.Missing)
	}
	out, err := mliropt.Run(opt, "func.func @f(%a: i32) -> i32 {\n  %0 = arith.addi %a, %a : i32\n  return %0 : i32\n}\n", "--mlir-print-op-generic")
	require.NoError(t, err)
	assert.Contains(t, out, `"arith.addi"`)
	_, err = mliropt.Run(opt, "func.func @f(%a: i32) -> f32 {\n  %0 = arith.addf %a, %a : i32\n  return %0 : f32\n}\n")
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "error"), err.Error())
}

func TestVerify(t *testing.T) {
	if mliropt.Path() == "" {
		t.Skip(mliropt.Missing)
	}
	mliropt.Verify(t, "%0 = arith.constant 1 : i32\n", "%0 = \"tt.get_program_id\"() {axis = 0 : i32} : () -> i32\n")
	ft := &fakeTB{TB: t}
	func() {
		defer func() { recover() }() // Fatalf of fakeTB panics to stop Verify
		mliropt.Verify(ft, "%0 = arith.addi %a : i32\n")
	}()
	assert.Contains(t, ft.msg, "text 1 of 1: mlir-opt")
}

// fakeTB records a Fatalf instead of failing the test.
type fakeTB struct {
	testing.TB
	msg string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic("fatal")
}
