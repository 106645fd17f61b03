package effects

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/halo-ml/halo/stablehlo"
)

// checkFormat checks a print format against the values it formats, reading
// the format as fmt.Sprintf does (flags, width, precision, argument
// indexes, %% for a percent sign): every verb has a value, every value is
// formatted, no width or precision is read from a value (* takes an int,
// and a print's values are arrays), and each verb formats its value's
// elements (Array.Format; a value that is nil or not a tensor, which
// Callback rejects, takes any verb). It returns an error naming every
// problem (each verb without a value, also one before an argument index
// where fmt would print %!v(MISSING)), or nil. The error's text is the
// message only ("print format ...: ..."): Fprint records it with the op
// and the values' types (FuncBuilder.Fail).
func checkFormat(format string, values []*stablehlo.Value) error {
	types := make([]stablehlo.Type, len(values))
	for i, v := range values {
		if v != nil {
			types[i] = v.Type
		}
	}
	return CheckFormat(format, types...)
}

// CheckFormat checks a print format against the types of the values it
// would format, as Print does before it adds the print (a nil type takes
// any verb): nil, or an error naming every problem ("print format ...:
// ..."). Packages that lower their own print ops to Fprint use it to
// report a bad format at their own op.
func CheckFormat(format string, types ...stablehlo.Type) error {
	n := len(types)
	var probs []string
	used := make([]bool, n)
	argNum, reordered := 0, false
	// The verbs without a value are named in one entry of probs, at the
	// first one's place: what it adds in parentheses depends on the whole
	// format (whether it has argument indexes), so it is written at the end.
	var missingSpecs []string
	firstMissing := -1
	end := len(format)
	for i := 0; i < end; {
		for i < end && format[i] != '%' {
			i++
		}
		if i >= end {
			break
		}
		start := i
		i++
		for i < end && strings.IndexByte("#0+- ", format[i]) >= 0 {
			i++
		}
		good, star, afterIndex := true, false, false
		// argIndex reads an argument index [k] at i, as fmt's argNumber.
		argIndex := func() {
			afterIndex = false
			if i >= end || format[i] != '[' {
				return
			}
			reordered = true
			k, width, ok := parseArgIndex(format[i:])
			i += width
			if ok && 0 <= k && k < n {
				argNum, afterIndex = k, true
				return
			}
			good, afterIndex = false, ok
		}
		// starArg consumes the value that a * would read as an int.
		starArg := func() {
			i++
			star = true
			if argNum < n {
				used[argNum] = true
				argNum++
			}
			afterIndex = false
		}
		argIndex()
		if i < end && format[i] == '*' {
			starArg()
		} else {
			var present bool
			_, present, i = parseNum(format, i)
			if afterIndex && present { // "%[3]2d"
				good = false
			}
		}
		if i+1 < end && format[i] == '.' {
			i++
			if afterIndex { // "%[3].2d"
				good = false
			}
			argIndex()
			if i < end && format[i] == '*' {
				starArg()
			} else {
				_, _, i = parseNum(format, i)
			}
		}
		if !afterIndex {
			argIndex()
		}
		if i >= end {
			probs = append(probs, fmt.Sprintf("%q at the end has no verb (%%%% prints a percent sign)", format[start:]))
			break
		}
		verb, size := utf8.DecodeRuneInString(format[i:])
		i += size
		spec := format[start:i]
		if star {
			probs = append(probs, fmt.Sprintf("%s reads a width or precision from an int value (*), and a print's values are arrays: write the number in the format", spec))
		}
		switch {
		case verb == '%': // a percent sign: no value
		case !good:
			probs = append(probs, fmt.Sprintf("%s has a bad argument index (%s)", spec, numbered(n)))
		case argNum >= n: // fmt prints %!verb(MISSING)
			if firstMissing < 0 {
				firstMissing = len(probs)
				probs = append(probs, "")
			}
			missingSpecs = append(missingSpecs, spec)
		default:
			used[argNum] = true
			if p := verbProblem(spec, verb, argNum, types[argNum]); p != "" {
				probs = append(probs, p)
			}
			argNum++
		}
	}
	// Every verb without a value is named, also where an argument index
	// comes later ("x=%v y=%v again=%[1]d" with one value: the second %v).
	// Without indexes the verbs take the values in order, and the count
	// says it; with them, how the values are numbered.
	why := numbered(n)
	if !reordered {
		why = fmt.Sprintf("the format's verbs take %s, %d given", plural(len(missingSpecs)+argNum, "value"), n)
	}
	if firstMissing >= 0 {
		verb := "has"
		if len(missingSpecs) > 1 {
			verb = "have"
		}
		probs[firstMissing] = fmt.Sprintf("%s %s no value (%s)", list(missingSpecs), verb, why)
	}
	if !reordered && len(missingSpecs) == 0 && argNum != n { // fmt prints %!(EXTRA ...)
		probs = append(probs, why)
	} else if reordered {
		for k, u := range used {
			if !u {
				probs = append(probs, fmt.Sprintf("value %d (%%[%d]) is not formatted", k, k+1))
			}
		}
	}
	if len(probs) == 0 {
		return nil
	}
	return fmt.Errorf("print format %q: %s", format, strings.Join(probs, "; "))
}

// verbProblem says why verb (in spec) does not format value k, or "".
// %T, which fmt handles itself, formats every value.
func verbProblem(spec string, verb rune, k int, typ stablehlo.Type) string {
	if verb == 'T' || typ == nil {
		return ""
	}
	t, ok := typ.(stablehlo.TensorType)
	if !ok || verbFormats(t.DType, verb) {
		return ""
	}
	takes := "%v %s"
	for _, c := range elementVerbs(t.DType) {
		takes += " %" + string(c)
	}
	return fmt.Sprintf("%s does not format value %d (%s): %s elements take %s", spec, k, t, t.DType, takes)
}

// parseArgIndex reads an argument index "[k]" at the start of s as fmt
// does: the 0-based index, the bytes read, and whether it is well formed.
func parseArgIndex(s string) (index, width int, ok bool) {
	if len(s) < 3 {
		return 0, 1, false
	}
	for i := 1; i < len(s); i++ {
		if s[i] == ']' {
			k, isNum, next := parseNum(s[:i], 1)
			if !isNum || next != i {
				return 0, i + 1, false
			}
			return k - 1, i + 1, true
		}
	}
	return 0, 1, false
}

// parseNum reads the decimal number at s[i:] as fmt does: one past 10^6
// is taken as a mistake that ends the format (next is len(s), no verb).
func parseNum(s string, i int) (num int, isNum bool, next int) {
	for next = i; next < len(s) && '0' <= s[next] && s[next] <= '9'; next++ {
		if num > 1e6 {
			return 0, false, len(s)
		}
		num = num*10 + int(s[next]-'0')
		isNum = true
	}
	return num, isNum, next
}

// numbered says how the n values are numbered in argument indexes.
func numbered(n int) string {
	if n == 0 {
		return "there are no values"
	}
	return fmt.Sprintf("the values are numbered from 1 to %d", n)
}

// list joins items as prose: "a", "a and b", "a, b and c".
func list(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// plural is "1 value" or "n values".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
