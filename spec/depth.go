package spec

import "unicode/utf8"

// checkDepth reports nesting deeper than MaxDepth before any parser sees the
// file. yaml.v3 and goccy/go-yaml recurse once per level: a 200 KB file of
// 100,000 nested brackets or "- - -" cost them minutes and gigabytes. This is
// one pass over the bytes that follows just enough YAML to know where
// collections open: block collections by indentation and their indicators
// ("- ", "? ", "key: "), flow collections by brackets, and what is text
// (quoted scalars, comments, block scalars). Where it is unsure, it counts: a
// collection too many is at worst an earlier error for a file that is wrong
// anyway, a collection missed would let the parsers see it.
//
// The limit is the converter's: the root is depth 0, and a collection at depth
// MaxDepth+1 (the MaxDepth+2nd open one) is where both report.
//
// It also counts the nodes (keys, values, items, collections) the parsers
// would make: a load may hold at most limit, used of which by the files
// before this one. yaml.v3 spends some 200 bytes on each node, so 8 MiB of
// "[1,1,1,...]" or of "k1: v" lines would cost a gigabyte. It returns the
// nodes counted.
func checkDepth(f *File, diags *Diagnostics, limit, used int) (int, bool) {
	s := depthScan{data: f.Data, nodesLeft: limit - used}
	if s.scan() {
		return s.nodes, true
	}
	pos := Pos{File: f.Name, Line: s.line, Col: utf8.RuneCount(f.Data[s.lineStart:s.at]) + 1}
	if s.nodes > s.nodesLeft {
		diags.Add(Error, pos, "", "too-many-nodes",
			"more YAML nodes (keys, values, items) than orch reads in one load, %d, here; not parsed (far beyond any real spec; the limit grows with --max-file-size)",
			limit)
		return s.nodes, false
	}
	diags.Add(Error, pos, "", "too-deep", "nesting deeper than %d levels", MaxDepth)
	return s.nodes, false
}

type blockLevel struct {
	indent int  // column (0-based) of the collection's entries
	seq    bool // a sequence ("- "); otherwise a mapping
}

type depthScan struct {
	data      []byte
	line      int // 1-based line of the current line
	lineStart int // offset of the current line
	at        int // offset of the collection that went too deep

	block []blockLevel
	flow  int  // open flow collections
	quote byte // '"' or '\'' inside a quoted scalar that spans lines
	node  bool // in flow: a node may start here (a quote there opens a quoted scalar)

	scalarParent int // inside a block scalar: indentation of its parent (>= -1); -2 when not in one
	scalarIndent int // its content indentation, 0 until the first non-blank line

	nodes, nodesLeft int // nodes counted (about what a parser makes), and how many may be
}

// node counts one more node starting at offset i; false when too many.
func (s *depthScan) countNode(i int) bool {
	s.nodes++
	if s.nodes > s.nodesLeft {
		s.at = i
		return false
	}
	return true
}

// open counts one more collection starting at offset i; false when too deep
// (or too many nodes).
func (s *depthScan) open(i int) bool {
	if len(s.block)+s.flow >= MaxDepth+1 {
		s.at = i
		return false
	}
	return s.countNode(i)
}

func (s *depthScan) scan() bool {
	s.line, s.scalarParent = 1, -2
	for start := 0; start < len(s.data); {
		end := start
		for end < len(s.data) && lineBreak(s.data, end) == 0 {
			end++
		}
		s.lineStart = start
		if !s.scanLine(start, end) {
			return false
		}
		start = end
		if end < len(s.data) {
			start += lineBreak(s.data, end)
		}
		s.line++
	}
	return true
}

func isBlank(b byte) bool { return b == ' ' || b == '\t' }

// ends reports whether offset i of a line ending at end is the end of a token:
// the end of the line or a blank.
func ends(data []byte, i, end int) bool { return i >= end || isBlank(data[i]) }

func (s *depthScan) scanLine(start, end int) bool {
	d := s.data
	indent := 0
	for start+indent < end && d[start+indent] == ' ' {
		indent++
	}
	first := start + indent
	// A document marker ends whatever was open, even unterminated text.
	if indent == 0 && end-start >= 3 && (string(d[start:start+3]) == "---" || string(d[start:start+3]) == "...") && ends(d, start+3, end) {
		s.block, s.flow, s.quote, s.scalarParent = s.block[:0], 0, 0, -2
		if d[start] == '-' {
			return s.blockNode(start+3, end)
		}
		return true
	}
	if s.scalarParent > -2 {
		blank := true
		for i := start; i < end; i++ {
			if !isBlank(d[i]) {
				blank = false
				break
			}
		}
		switch {
		case blank:
			return true
		case s.scalarIndent == 0 && indent > s.scalarParent:
			s.scalarIndent = indent
			return true
		case s.scalarIndent > 0 && indent >= s.scalarIndent:
			return true
		}
		s.scalarParent = -2 // a line less indented ends the block scalar
	}
	if s.quote != 0 || s.flow > 0 {
		return s.inline(start, end)
	}
	if first >= end || d[first] == '#' || indent == 0 && d[first] == '%' && len(s.block) == 0 {
		return true
	}
	for len(s.block) > 0 && s.block[len(s.block)-1].indent > indent {
		s.block = s.block[:len(s.block)-1]
	}
	return s.blockNode(first, end)
}

// enter notes a block collection entry at column col: the same collection as
// the innermost one at that column, or a new one.
func (s *depthScan) enter(col int, seq bool, i int) bool {
	if n := len(s.block); n > 0 && s.block[n-1].indent == col && s.block[n-1].seq && !seq {
		s.block = s.block[:n-1] // a key after "key:\n- item" at the key's column
	}
	if n := len(s.block); n > 0 && s.block[n-1].indent == col && s.block[n-1].seq == seq {
		return true
	}
	if !s.open(i) {
		return false
	}
	s.block = append(s.block, blockLevel{indent: col, seq: seq})
	return true
}

// blockNode reads the nodes that start at i on a block line: indicators of
// nested compact collections ("- - a", "- key: v", "? k"), then a key or a
// value.
func (s *depthScan) blockNode(i, end int) bool {
	d := s.data
	for {
		for i < end && isBlank(d[i]) {
			i++
		}
		if i >= end || d[i] == '#' {
			return true
		}
		col := i - s.lineStart
		switch c := d[i]; {
		case (c == '-' || c == '?') && ends(d, i+1, end):
			if !s.enter(col, c == '-', i) {
				return false
			}
			i++
			continue
		case c == ':' && ends(d, i+1, end): // the value of an explicit key
			i++
			continue
		case c == '&' || c == '!': // an anchor or a tag before the node
			for i < end && !isBlank(d[i]) {
				i++
			}
			continue
		}
		if k := s.keyEnd(i, end); k > 0 {
			if !s.enter(col, false, i) || !s.countNode(i) {
				return false
			}
			return s.value(k, end)
		}
		return s.value(i, end)
	}
}

// keyEnd returns the offset after "key:" if an implicit key starts at i, or 0.
func (s *depthScan) keyEnd(i, end int) int {
	d := s.data
	if d[i] == '"' || d[i] == '\'' {
		j, closed := s.skipQuoted(d[i], i+1, end)
		if !closed {
			return 0
		}
		for j < end && isBlank(d[j]) {
			j++
		}
		if j < end && d[j] == ':' && ends(d, j+1, end) {
			return j + 1
		}
		return 0
	}
	if d[i] == '[' || d[i] == '{' || d[i] == '|' || d[i] == '>' {
		return 0
	}
	for j := i; j < end; j++ {
		switch {
		case d[j] == ':' && ends(d, j+1, end):
			return j + 1
		case d[j] == '#' && j > i && isBlank(d[j-1]):
			return 0
		}
	}
	return 0
}

// value reads a node value starting at i on a block line: a flow collection,
// a quoted scalar, a block scalar's header, or plain text.
func (s *depthScan) value(i, end int) bool {
	d := s.data
	for {
		for i < end && isBlank(d[i]) {
			i++
		}
		if i < end && (d[i] == '&' || d[i] == '!') {
			for i < end && !isBlank(d[i]) {
				i++
			}
			continue
		}
		break
	}
	if i >= end {
		return true
	}
	switch d[i] {
	case '-': // "key: - x" is not YAML, but the parsers may still read a sequence there
		if ends(d, i+1, end) {
			return s.blockNode(i, end)
		}
	case '[', '{', '"', '\'':
		s.node = true
		return s.inline(i, end)
	}
	if !s.countNode(i) { // a scalar
		return false
	}
	switch d[i] {
	case '|', '>':
		s.scalarParent, s.scalarIndent = -1, 0
		if n := len(s.block); n > 0 {
			s.scalarParent = s.block[n-1].indent
		}
		for j := i + 1; j < end && !isBlank(d[j]); j++ {
			if c := d[j]; c >= '1' && c <= '9' {
				s.scalarIndent = max(s.scalarParent, 0) + int(c-'0')
			}
		}
	}
	return true
}

// skipQuoted returns the offset after the quoted scalar's closing quote, or
// the line's end and false if it goes on to the next line.
func (s *depthScan) skipQuoted(q byte, i, end int) (int, bool) {
	d := s.data
	for ; i < end; i++ {
		switch {
		case q == '"' && d[i] == '\\':
			i++
		case d[i] == q && q == '\'' && i+1 < end && d[i+1] == '\'':
			i++
		case d[i] == q:
			return i + 1, true
		}
	}
	return end, false
}

// inline reads flow content and quoted scalars from i to the end of the line;
// both may go on over the next lines.
func (s *depthScan) inline(i, end int) bool {
	d := s.data
	for i < end {
		if s.quote != 0 {
			j, closed := s.skipQuoted(s.quote, i, end)
			i = j
			if closed {
				s.quote, s.node = 0, false
			}
			continue
		}
		if s.flow == 0 && !s.node {
			return true // the rest of a block line after a flow collection or quoted value
		}
		c := d[i]
		switch {
		case isBlank(c):
		case c == '#' && (i == s.lineStart || isBlank(d[i-1])):
			return true
		case c == '[' || c == '{':
			if !s.open(i) {
				return false
			}
			s.flow++
			s.node = true
		case c == ']' || c == '}':
			if s.flow > 0 {
				s.flow--
			}
			s.node = false
		case c == ',' || (c == ':' || c == '?') && ends(d, i+1, end):
			s.node = s.flow > 0
		case c == ':' && i > 0 && (d[i-1] == '"' || d[i-1] == '\'' || d[i-1] == ']' || d[i-1] == '}'):
			s.node = true // JSON-like {"a":"b"}
		case (c == '"' || c == '\'') && s.node:
			s.quote = c
			if !s.countNode(i) {
				return false
			}
		case (c == '&' || c == '!') && s.node:
			for i+1 < end && !isBlank(d[i+1]) && d[i+1] != ',' && d[i+1] != '[' && d[i+1] != ']' && d[i+1] != '{' && d[i+1] != '}' {
				i++
			}
		default:
			if s.node && !s.countNode(i) { // a plain scalar starts
				return false
			}
			s.node = false
		}
		i++
	}
	return true
}

// roughDepth bounds from above how deep a parser could recurse on data,
// whatever it makes of quotes and comments: the most brackets open at once
// (with the "- " and "? " inside them, which a parser may take for block
// collections there) plus, on the deepest line, its indentation and its
// "- ", "? " and ": " indicators.
func roughDepth(data []byte) int {
	flow, inFlow, maxFlow, maxLine := 0, 0, 0, 0
	for start := 0; start < len(data); {
		end := start
		for end < len(data) && data[end] == ' ' {
			end++
		}
		line := end - start
		for ; end < len(data) && lineBreak(data, end) == 0; end++ {
			indicator := end+1 >= len(data) || isBlank(data[end+1]) || lineBreak(data, end+1) > 0
			switch data[end] {
			case '[', '{':
				flow++
			case ']', '}':
				flow = max(flow-1, 0)
				if flow == 0 {
					inFlow = 0
				}
			case '-', '?':
				if indicator && flow > 0 {
					inFlow++
				}
				fallthrough
			case ':':
				if indicator {
					line++
				}
			}
			maxFlow = max(maxFlow, flow+inFlow)
		}
		maxLine = max(maxLine, line)
		start = end
		if end < len(data) {
			start += lineBreak(data, end)
		}
	}
	return maxFlow + maxLine
}
