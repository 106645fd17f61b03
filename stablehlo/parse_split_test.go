package stablehlo

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSplitModules: a separator is a line of exactly "// -----" once the
// spaces, tabs and carriage returns around it are trimmed; banners of
// dashes and text after the marker are comments. Each part starts on
// the line after its separator.
func TestSplitModules(t *testing.T) {
	type part struct {
		text string
		line int
	}
	for _, c := range []struct {
		name, text string
		want       []part
	}{
		{"empty", "", []part{{"", 1}}},
		{"none", "a\nb\n", []part{{"a\nb\n", 1}}},
		{"plain", "a\n// -----\nb\n", []part{{"a\n", 1}, {"b\n", 3}}},
		{"banner", "a\n// ------------\nb\n", []part{{"a\n// ------------\nb\n", 1}}},
		{"banner between", "// ---------\n// helpers\n// ---------\na\n// -----\nb", []part{{"// ---------\n// helpers\n// ---------\na\n", 1}, {"b", 6}}},
		{"text after", "a\n// ----- main -----\nb\n", []part{{"a\n// ----- main -----\nb\n", 1}}},
		{"text after, spaced", "a\n// ----- x\nb\n", []part{{"a\n// ----- x\nb\n", 1}}},
		{"no space", "a\n//-----\nb\n", []part{{"a\n//-----\nb\n", 1}}},
		{"text before", "a\nx // -----\nb\n", []part{{"a\nx // -----\nb\n", 1}}},
		{"ir dump banner", "// -----// IR Dump After Canonicalizer //----- //\na\n", []part{{"// -----// IR Dump After Canonicalizer //----- //\na\n", 1}}},
		{"crlf", "a\r\n// -----\r\nb\r\n", []part{{"a\r\n", 1}, {"b\r\n", 3}}},
		{"trailing spaces", "a\n// -----  \t\nb\n", []part{{"a\n", 1}, {"b\n", 3}}},
		{"trailing spaces, crlf", "a\r\n// -----  \r\nb\r\n", []part{{"a\r\n", 1}, {"b\r\n", 3}}},
		{"indented", "a\n\t  // -----\nb\n", []part{{"a\n", 1}, {"b\n", 3}}},
		{"first line", "// -----\na\n", []part{{"", 1}, {"a\n", 2}}},
		{"last line, no newline", "a\n// -----", []part{{"a\n", 1}, {"", 3}}},
		{"last line", "a\n// -----\n", []part{{"a\n", 1}, {"", 3}}},
		{"adjacent", "a\n// -----\n// -----\nb", []part{{"a\n", 1}, {"", 3}, {"b", 4}}},
		{"three", "a\n\n// -----\nb\n// -----\nc", []part{{"a\n\n", 1}, {"b\n", 4}, {"c", 6}}},
	} {
		var got []part
		for _, p := range SplitModules([]byte(c.text)) {
			got = append(got, part{string(p.Text), p.Line})
			assert.Equal(t, len(p.Text), cap(p.Text), "%s: a part has no room to append over the text after it", c.name)
		}
		assert.Equal(t, c.want, got, c.name)
	}
}

// TestParseAllSeparators: ParseAll splits only at separator lines as
// SplitModules finds them, so a banner comment of dashes, or a line with
// text after "// -----", no longer splits a module in two (each was read
// as a separator: a line starting "// -----"); a separator with trailing
// space or a CRLF ending still splits, and errors keep the file's line.
func TestParseAllSeparators(t *testing.T) {
	banner := "// ----------------------------------------\n// helpers\n// ----------------------------------------\n" +
		"func.func private @h() {\n  return\n}\n" +
		"// ----- main -----\n" +
		"func.func @main() {\n  // ------------\n  func.call @h() : () -> ()\n  return\n}\n"
	mods, err := ParseAll([]byte(banner))
	require.NoError(t, err, "banners are comments")
	require.Len(t, mods, 1)
	assert.NotNil(t, mods[0].Func("h"))
	assert.NotNil(t, mods[0].Func("main"))

	for name, text := range map[string]string{
		"trailing spaces": "func.func @a() {\n  return\n}\n// -----   \t\nfunc.func @b() {\n  return\n}\n",
		"crlf":            "func.func @a() {\r\n  return\r\n}\r\n// -----\r\nfunc.func @b() {\r\n  return\r\n}\r\n",
		"crlf, spaces":    "func.func @a() {\r\n  return\r\n}\r\n  // -----  \r\nfunc.func @b() {\r\n  return\r\n}\r\n",
	} {
		mods, err := ParseAll([]byte(text))
		require.NoError(t, err, name)
		require.Len(t, mods, 2, name)
		assert.NotNil(t, mods[0].Func("a"), name)
		assert.NotNil(t, mods[1].Func("b"), name)
	}

	// An error after banners and a separator is on its line of the file.
	bad := "// ------------\n// -----x\nfunc.func @a() {\n  return\n}\n// -----\nfunc.func @b() {\n  return %x : tensor<f32>\n}\n"
	mods, err = ParseAll([]byte(bad))
	var se *SyntaxError
	require.True(t, errors.As(err, &se), "error %v", err)
	assert.Equal(t, 8, se.Line)
	require.Len(t, mods, 1, "the modules before the error")
	assert.NotNil(t, mods[0].Func("a"))
}
