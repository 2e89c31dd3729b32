package main

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// vt is a small terminal emulator for the live display's tests: the VT100
// subset orch writes (printable text with autowrap as xterm does it, CR,
// LF, BS, cursor up/down/forward/back/position, erase in line and in
// display; colours and modes are ignored). What it shows is the screen a
// person would see.
type vt struct {
	cols, rows int
	cells      [][]rune // 0: the right half of a wide character
	r, c       int
	wrapNext   bool // the last column was written: the next character wraps
	pending    []byte
}

func newVT(cols, rows int) *vt {
	v := &vt{cols: cols, rows: rows}
	for range rows {
		v.cells = append(v.cells, v.blank())
	}
	return v
}

func (v *vt) blank() []rune {
	row := make([]rune, v.cols)
	for i := range row {
		row[i] = ' '
	}
	return row
}

// resize changes the size as xterm does: lines are cut, not reflowed; rows
// lost at the bottom push the screen up when the cursor was there.
func (v *vt) resize(cols, rows int) {
	for i, row := range v.cells {
		n := v.blankOf(cols)
		copy(n, row)
		v.cells[i] = n
	}
	v.cols = cols
	for len(v.cells) > rows {
		if v.r >= rows {
			v.cells = v.cells[1:]
			v.r--
		} else {
			v.cells = v.cells[:len(v.cells)-1]
		}
	}
	for len(v.cells) < rows {
		v.cells = append(v.cells, v.blankOf(cols))
	}
	v.rows = rows
	v.c = min(v.c, cols-1)
	v.wrapNext = false
}

func (v *vt) blankOf(cols int) []rune {
	row := make([]rune, cols)
	for i := range row {
		row[i] = ' '
	}
	return row
}

func (v *vt) write(b []byte) {
	b = append(v.pending, b...)
	v.pending = nil
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == 0x1b:
			n := v.escape(b[i:])
			if n == 0 { // incomplete: wait for the rest
				v.pending = append([]byte(nil), b[i:]...)
				return
			}
			i += n
			continue
		case c == '\r':
			v.c, v.wrapNext = 0, false
		case c == '\n':
			v.lineFeed()
		case c == '\b':
			if v.c > 0 {
				v.c--
			}
			v.wrapNext = false
		case c == '\t':
			v.c = min((v.c/8+1)*8, v.cols-1)
		case c < 0x20 || c == 0x7f:
		default:
			if !utf8.FullRune(b[i:]) {
				v.pending = append([]byte(nil), b[i:]...)
				return
			}
			r, size := utf8.DecodeRune(b[i:])
			v.put(r)
			i += size
			continue
		}
		i++
	}
}

func (v *vt) lineFeed() {
	v.wrapNext = false
	if v.r == v.rows-1 {
		v.cells = append(v.cells[1:], v.blank())
		return
	}
	v.r++
}

func (v *vt) put(r rune) {
	w := runeWidth(r)
	if w == 0 {
		return
	}
	if v.wrapNext || v.c+w > v.cols {
		v.c = 0
		v.lineFeed()
	}
	v.cells[v.r][v.c] = r
	if w == 2 {
		v.cells[v.r][v.c+1] = 0
	}
	v.c += w
	if v.c >= v.cols {
		v.c, v.wrapNext = v.cols-1, true
	}
}

// escape applies the sequence b starts with and returns its length (0: it
// is not complete yet).
func (v *vt) escape(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	if b[1] != '[' {
		return 2 // ESC 7, ESC 8, keypad modes: nothing orch relies on
	}
	end := 2
	for end < len(b) && (b[end] < 0x40 || b[end] > 0x7e) {
		end++
	}
	if end == len(b) {
		return 0
	}
	params := string(b[2:end])
	private := strings.HasPrefix(params, "?")
	var n []int
	for _, p := range strings.Split(strings.TrimPrefix(params, "?"), ";") {
		x, _ := strconv.Atoi(p)
		n = append(n, x)
	}
	arg := func(i, def int) int {
		if i < len(n) && n[i] > 0 {
			return n[i]
		}
		return def
	}
	if private {
		return end + 1
	}
	switch b[end] {
	case 'A':
		v.r = max(v.r-arg(0, 1), 0)
	case 'B':
		v.r = min(v.r+arg(0, 1), v.rows-1)
	case 'C':
		v.c = min(v.c+arg(0, 1), v.cols-1)
	case 'D':
		v.c = max(v.c-arg(0, 1), 0)
	case 'G':
		v.c = min(arg(0, 1), v.cols) - 1
	case 'H', 'f':
		v.r, v.c = min(arg(0, 1), v.rows)-1, min(arg(1, 1), v.cols)-1
	case 'K':
		from, to := v.c, v.cols
		switch arg(0, 0) {
		case 1:
			from, to = 0, v.c+1
		case 2:
			from = 0
		}
		for i := from; i < to; i++ {
			v.cells[v.r][i] = ' '
		}
	case 'J':
		switch arg(0, 0) {
		case 0:
			for i := v.c; i < v.cols; i++ {
				v.cells[v.r][i] = ' '
			}
			for r := v.r + 1; r < v.rows; r++ {
				v.cells[r] = v.blank()
			}
		case 1:
			for r := 0; r < v.r; r++ {
				v.cells[r] = v.blank()
			}
			for i := 0; i <= v.c && i < v.cols; i++ {
				v.cells[v.r][i] = ' '
			}
		case 2, 3:
			for r := range v.cells {
				v.cells[r] = v.blank()
			}
		}
	}
	v.wrapNext = false
	return end + 1
}

// screen is what the terminal shows: its rows, trailing blanks and blank
// rows at the bottom left out.
func (v *vt) screen() string {
	var rows []string
	for _, row := range v.cells {
		var b strings.Builder
		for _, r := range row {
			if r != 0 {
				b.WriteRune(r)
			}
		}
		rows = append(rows, strings.TrimRight(b.String(), " "))
	}
	for len(rows) > 0 && rows[len(rows)-1] == "" {
		rows = rows[:len(rows)-1]
	}
	return strings.Join(rows, "\n") + "\n"
}
