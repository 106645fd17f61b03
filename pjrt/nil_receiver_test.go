package pjrt

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestNilReceivers calls every exported method of every pjrt pointer type
// on a nil receiver, with zero arguments: each returns (an error where it
// returns one: "... is nil") rather than crashing. A nil *Executable, say,
// is what a failed Compile returns beside its error (review found 69
// methods that crashed). Close returns nil, and String "Type(nil)".
func TestNilReceivers(t *testing.T) {
	for _, v := range []any{
		(*AliasFulfillment)(nil), (*AsyncTrackingEvent)(nil), (*AsyncTransfer)(nil), (*Buffer)(nil),
		(*Client)(nil), (*ControlDependency)(nil), (*Device)(nil), (*Event)(nil), (*Executable)(nil),
		(*ExecuteContext)(nil), (*Memory)(nil), (*Plugin)(nil), (*RawCopy)(nil), (*Topology)(nil),
		(*UnloadedExecutable)(nil), (*UserEvent)(nil),
	} {
		rv := reflect.ValueOf(v)
		typ := rv.Type().Elem().Name()
		// "UnloadedExecutable" -> "unloaded executable is nil"
		want := strings.ToLower(regexp.MustCompile(`\B[A-Z]`).ReplaceAllString(typ, " $0")) + " is nil"
		for i := range rv.NumMethod() {
			m := rv.Type().Method(i)
			t.Run(fmt.Sprintf("%s.%s", typ, m.Name), func(t *testing.T) {
				ft := m.Type
				args := []reflect.Value{rv}
				n := ft.NumIn()
				if ft.IsVariadic() {
					n--
				}
				for j := 1; j < n; j++ {
					args = append(args, reflect.Zero(ft.In(j)))
				}
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("(*%s)(nil).%s crashed: %v", typ, m.Name, r)
					}
				}()
				out := m.Func.Call(args)
				switch {
				case ft.NumOut() > 0 && ft.Out(ft.NumOut()-1) == reflect.TypeFor[error]():
					err, _ := out[len(out)-1].Interface().(error)
					var pe *Error
					switch {
					case m.Name == "Close":
						if err != nil {
							t.Errorf("(*%s)(nil).Close() = %v, want nil", typ, err)
						}
					case err == nil || !errors.As(err, &pe) || pe.Code != InvalidArgument || !strings.Contains(err.Error(), want):
						t.Errorf("(*%s)(nil).%s: error %v, want an InvalidArgument error %q", typ, m.Name, err, want)
					}
				case m.Name == "String": // Client's is "client(nil)"
					if s := out[0].String(); !strings.EqualFold(s, typ+"(nil)") {
						t.Errorf("(*%s)(nil).String() = %q, want %q", typ, s, typ+"(nil)")
					}
				}
			})
		}
	}
}
