package client

import (
	"bytes"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"net"

	"github.com/go-sql-driver/mysql"
)

// myWire is the lean path of a MySQL-protocol connection: the statements a
// suite repeats, written by hand over the socket go-sql-driver connected
// and logged in. go-sql-driver has no allocation-free API: every statement
// goes through database/sql/driver values (an int64 in an interface), a
// result or rows object, and a row of driver.Values; the binary protocol's
// COM_STMT_EXECUTE and its replies are simple enough to encode into a reused
// buffer and decode in place. The driver keeps the connection's setup,
// DDL, statements with arguments it alone can quote, and LOAD DATA LOCAL.
//
// The two never interleave: each runs whole commands (a request and its
// full reply), one at a time, on the connection's one goroutine.
type myWire struct {
	nc     net.Conn
	caps   uint32 // the capabilities the driver negotiated, read from its handshake response
	ext    uint32 // MariaDB's extended capabilities, likewise
	rbuf   []byte // read buffer; rbuf[r:w] is read and not yet taken
	r, w   int
	grow   bool    // the last read filled rbuf: double it at the next fill
	wbuf   []byte  // the request being written
	big    []byte  // a packet of 16 MB or more, joined from its pieces (rare)
	seq    uint8   // the sequence number the next packet must carry
	status uint16  // the server status of the last OK or EOF packet
	args   []Arg   // Exec's and Query's arguments, converted (reused)
	broken error   // set when the connection is unusable; returned from then on
	vals   Values  // QueryEach's row, reused
	tcols  []myCol // a text statement's result columns (QueryEach), reused
	trows  myRows  // where a text statement's rows go (QueryEach)
}

// Capability flags (https://dev.mysql.com/doc/dev/mysql-server/latest/group__group__cs__capabilities__flags.html,
// https://mariadb.com/kb/en/connection/#capabilities).
const (
	myClientMySQL        = 1 << 0 // CLIENT_LONG_PASSWORD: MariaDB 10.2 and later leave it off
	myClientDeprecateEOF = 1 << 24
	myCacheMetadata      = 1 << 4 // MariaDB's MARIADB_CLIENT_CACHE_METADATA (extended)
	myMoreResults        = 0x0008 // SERVER_MORE_RESULTS_EXISTS
	myMaxPacket          = 1<<24 - 1
)

// The buffers are sized to need, so that thousands of connections cost
// little: the read buffer starts small (a point select's whole reply fits)
// and doubles whenever a read fills it, up to myRbufMax (a range's reply
// then comes in one read); a larger packet gets a buffer of its own, given
// up after the reply. The request buffer grows to the largest request and
// is kept up to myWbufKeep (the load's 500-row INSERTs).
const (
	myRbufInit = 512
	myRbufMax  = 64 << 10
	myWbufKeep = 1 << 20
)

// sniffConn passes the driver's connection through and reads the
// capabilities from the handshake response the driver writes first: the
// driver keeps what it negotiated to itself, and the replies' layout
// depends on it (EOF packets or not, MariaDB's cached column metadata).
type sniffConn struct {
	net.Conn
	w    *myWire
	done bool
}

func (s *sniffConn) Write(b []byte) (int, error) {
	if !s.done {
		s.done = true
		// header (4), capabilities (4), max packet (4), collation (1),
		// filler (19), MariaDB's extended capabilities (4).
		if len(b) >= 8 && b[3] == 1 {
			s.w.caps = binary.LittleEndian.Uint32(b[4:8])
			if s.w.caps&myClientMySQL == 0 && len(b) >= 36 {
				s.w.ext = binary.LittleEndian.Uint32(b[32:36])
			}
		}
	}
	return s.Conn.Write(b)
}

func newMyWire(nc net.Conn) *myWire {
	return &myWire{nc: nc, rbuf: make([]byte, myRbufInit)}
}

func (m *myWire) deprecateEOF() bool { return m.caps&myClientDeprecateEOF != 0 }

// lost marks the connection unusable after err (an I/O error, a reply out
// of step) and returns the error every later call gets. The socket is
// closed: a half-read reply cannot be resynchronised.
func (m *myWire) lost(err error) error {
	if m.broken == nil {
		var ne net.Error
		if errors.Is(err, net.ErrClosed) || errors.As(err, &ne) || errors.Is(err, driver.ErrBadConn) {
			m.broken = err
		} else {
			m.broken = fmt.Errorf("%w: %w", driver.ErrBadConn, err)
		}
		m.nc.Close()
	}
	return m.broken
}

// start begins a request with command byte cmd.
func (m *myWire) start(cmd byte) []byte {
	if cap(m.wbuf) > myWbufKeep {
		m.wbuf = nil
	}
	return append(m.wbuf[:0], 0, 0, 0, 0, cmd)
}

// send writes the request in b (4 bytes of room for the header, then the
// payload), split into packets of 16 MB as the protocol wants.
func (m *myWire) send(b []byte) error {
	m.wbuf = b
	if m.broken != nil {
		return m.broken
	}
	if m.r != m.w {
		return m.lost(errors.New("mysql: unread reply data before a request"))
	}
	m.r, m.w, m.big = 0, 0, nil
	if len(m.rbuf) > myRbufMax {
		m.rbuf = make([]byte, myRbufMax)
	}
	payload := len(b) - 4
	if payload < myMaxPacket {
		b[0], b[1], b[2], b[3] = byte(payload), byte(payload>>8), byte(payload>>16), 0
		m.seq = 1
		if _, err := m.nc.Write(b); err != nil {
			return m.lost(err)
		}
		return nil
	}
	// Rare: a request of 16 MB or more goes in pieces, each with a header.
	var hdr [4]byte
	p := b[4:]
	for seq := 0; ; seq++ {
		n := min(len(p), myMaxPacket)
		hdr[0], hdr[1], hdr[2], hdr[3] = byte(n), byte(n>>8), byte(n>>16), byte(seq)
		if _, err := m.nc.Write(hdr[:]); err != nil {
			return m.lost(err)
		}
		if _, err := m.nc.Write(p[:n]); err != nil {
			return m.lost(err)
		}
		p = p[n:]
		if n < myMaxPacket {
			m.seq = uint8(seq + 1)
			return nil
		}
	}
}

// fill reads until rbuf holds at least need unread bytes.
func (m *myWire) fill(need int) error {
	if m.w-m.r >= need {
		return nil
	}
	if len(m.rbuf)-m.r < need || m.grow {
		size := len(m.rbuf)
		if m.grow && size < myRbufMax {
			size *= 2 // the last read filled it: more was waiting
		}
		for size < need {
			size *= 2
		}
		buf := m.rbuf
		if size != len(buf) {
			buf = make([]byte, size)
		}
		m.w = copy(buf, m.rbuf[m.r:m.w])
		m.r = 0
		m.rbuf = buf
		m.grow = false
	}
	for m.w-m.r < need {
		n, err := m.nc.Read(m.rbuf[m.w:])
		m.w += n
		if m.w == len(m.rbuf) && n > 0 && len(m.rbuf) < myRbufMax {
			m.grow = true
		}
		if err != nil && m.w-m.r < need {
			return m.lost(err)
		}
	}
	return nil
}

// next returns the next packet's payload, valid until the next call.
func (m *myWire) next() ([]byte, error) {
	if m.broken != nil {
		return nil, m.broken
	}
	p, err := m.packet()
	if err == nil && len(p) == 0 {
		return nil, m.lost(errors.New("mysql: empty packet"))
	}
	if err != nil || len(p) < myMaxPacket {
		return p, err
	}
	// Rare: a payload of 16 MB or more comes in pieces; join them.
	m.big = append(m.big[:0], p...)
	for {
		p, err := m.packet()
		if err != nil {
			return nil, err
		}
		m.big = append(m.big, p...)
		if len(p) < myMaxPacket {
			return m.big, nil
		}
	}
}

// packet reads one packet and checks its sequence number.
func (m *myWire) packet() ([]byte, error) {
	if err := m.fill(4); err != nil {
		return nil, err
	}
	h := m.rbuf[m.r : m.r+4]
	n := int(h[0]) | int(h[1])<<8 | int(h[2])<<16
	if h[3] != m.seq {
		return nil, m.lost(fmt.Errorf("mysql: packet %d where %d was due", h[3], m.seq))
	}
	m.seq++
	if err := m.fill(4 + n); err != nil {
		return nil, err
	}
	p := m.rbuf[m.r+4 : m.r+4+n]
	m.r += 4 + n
	if m.r == m.w {
		m.r, m.w = 0, 0
	}
	return p, nil
}

// lenenc reads a length-encoded integer at p[0:] and returns it and its size.
func lenenc(p []byte) (uint64, int) {
	if len(p) == 0 {
		return 0, 0
	}
	switch p[0] {
	case 0xfc:
		if len(p) >= 3 {
			return uint64(binary.LittleEndian.Uint16(p[1:])), 3
		}
	case 0xfd:
		if len(p) >= 4 {
			return uint64(p[1]) | uint64(p[2])<<8 | uint64(p[3])<<16, 4
		}
	case 0xfe:
		if len(p) >= 9 {
			return binary.LittleEndian.Uint64(p[1:]), 9
		}
	default:
		return uint64(p[0]), 1
	}
	return 0, len(p)
}

func appendLenenc(b []byte, n uint64) []byte {
	switch {
	case n < 251:
		return append(b, byte(n))
	case n < 1<<16:
		return append(b, 0xfc, byte(n), byte(n>>8))
	case n < 1<<24:
		return append(b, 0xfd, byte(n), byte(n>>8), byte(n>>16))
	}
	return binary.LittleEndian.AppendUint64(append(b, 0xfe), n)
}

// errPacket turns an ERR packet into the driver's error type, so that
// Retryable and the callers see one kind of error whichever path ran.
func errPacket(p []byte) error {
	if len(p) < 3 {
		return &mysql.MySQLError{Number: 0, Message: "malformed error packet"}
	}
	me := &mysql.MySQLError{Number: binary.LittleEndian.Uint16(p[1:3])}
	pos := 3
	if len(p) >= 9 && p[3] == '#' {
		copy(me.SQLState[:], p[4:9])
		pos = 9
	}
	me.Message = string(p[pos:])
	return me
}

// ok reads an OK packet (0x00, or 0xfe ending rows without EOF packets):
// its affected rows and status.
func (m *myWire) ok(p []byte) int64 {
	aff, n := lenenc(p[1:])
	_, k := lenenc(p[1+n:])
	if s := 1 + n + k; len(p) >= s+2 {
		m.status = binary.LittleEndian.Uint16(p[s:])
	}
	return int64(aff)
}

// reply reads a command's whole reply (every result if there are several)
// and returns the rows affected and the rows returned.
func (m *myWire) reply() (affected, rows int64, err error) { return m.result(nil) }

// myRows is where a reply's rows go when the caller reads them
// (QueryEach); result discards them when it or its each is nil.
type myRows struct {
	binary bool     // COM_STMT_EXECUTE's binary rows, else the text protocol's
	cols   *[]myCol // the columns: a prepared statement's, kept from one execution to the next
	v      *Values
	each   func(*Values) // nil: the rows are discarded (a prepared statement's columns still kept)
}

// myCol is what the lean path keeps of a result column: enough to write
// its values as text.
type myCol struct {
	typ      byte
	unsigned bool
	decimals byte
}

// result reads a command's whole reply, as reply does, and hands each row
// to rs when it is not nil.
func (m *myWire) result(rs *myRows) (affected, rows int64, err error) {
	for {
		p, err := m.next()
		if err != nil {
			return affected, rows, err
		}
		switch p[0] {
		case 0x00:
			affected += m.ok(p)
			if m.status&myMoreResults == 0 {
				return affected, rows, nil
			}
			continue
		case 0xff:
			return affected, rows, errPacket(p)
		case 0xfb:
			// LOAD DATA LOCAL INFILE asks for a file: send none (an empty
			// packet), read the server's answer, and say where it belongs.
			if _, err := m.nc.Write([]byte{0, 0, 0, m.seq}); err != nil {
				return affected, rows, m.lost(err)
			}
			m.seq++
			if _, _, err := m.reply(); err != nil {
				return affected, rows, err
			}
			return affected, rows, errors.New("LOAD DATA LOCAL goes through client.Copy")
		}
		// A result set: column count, the columns (unless MariaDB has them
		// cached from the prepare), an EOF packet in the older protocol,
		// the rows, then an EOF or OK packet.
		ncols, n := lenenc(p)
		meta := true
		if m.ext&myCacheMetadata != 0 && n < len(p) {
			meta = p[n] == 1
		}
		// The columns are read when the rows are (QueryEach), and kept when
		// MariaDB sends a prepared statement's anew (they changed), for a
		// later execution to which it sends none.
		var cols []myCol
		if rs != nil && (rs.each != nil || meta && m.ext&myCacheMetadata != 0) {
			if cols, err = m.columns(rs.cols, int(ncols), meta); err != nil {
				return affected, rows, err
			}
		} else if meta {
			for range ncols {
				if _, err := m.next(); err != nil {
					return affected, rows, err
				}
			}
		}
		if !m.deprecateEOF() {
			if _, err := m.next(); err != nil {
				return affected, rows, err
			}
		}
		for {
			p, err := m.next()
			if err != nil {
				return affected, rows, err
			}
			if p[0] == 0xfe && len(p) < myMaxPacket {
				if m.deprecateEOF() {
					m.ok(p)
				} else if len(p) >= 5 {
					m.status = binary.LittleEndian.Uint16(p[3:])
				}
				break
			}
			if p[0] == 0xff {
				return affected, rows, errPacket(p)
			}
			if rs != nil && rs.each != nil {
				ok := false
				if rs.binary {
					ok = rs.v.binaryRow(cols, p)
				} else {
					ok = rs.v.textRow(cols, p)
				}
				if !ok {
					return affected, rows, m.lost(fmt.Errorf("mysql: malformed row of %d columns", len(cols)))
				}
				rs.each(rs.v)
			}
			rows++
		}
		if m.status&myMoreResults == 0 {
			return affected, rows, nil
		}
	}
}

// columns reads a result set's n column definitions into *cols when the
// server sends them, and returns the columns: those it kept when MariaDB
// has them cached (sent with the prepare or an earlier execution).
func (m *myWire) columns(cols *[]myCol, n int, meta bool) ([]myCol, error) {
	if !meta {
		if len(*cols) != n {
			return nil, m.lost(fmt.Errorf("mysql: %d columns cached, %d in the result", len(*cols), n))
		}
		return *cols, nil
	}
	c := (*cols)[:0]
	for range n {
		p, err := m.next()
		if err != nil {
			return nil, err
		}
		col, ok := parseColumn(p)
		if !ok {
			return nil, m.lost(errors.New("mysql: malformed column definition"))
		}
		c = append(c, col)
	}
	*cols = c
	return c, nil
}

// parseColumn reads a column definition packet: six length-encoded strings
// (catalog, schema, table and its original name, the column's name and
// its original), then fixed-length fields: their length (0x0c), the
// character set (2 bytes), the column's length (4), type (1), flags (2)
// and decimals (1).
func parseColumn(p []byte) (myCol, bool) {
	pos := 0
	for range 6 {
		if pos >= len(p) {
			return myCol{}, false
		}
		n, k := lenenc(p[pos:])
		if n > uint64(len(p)) {
			return myCol{}, false
		}
		pos += k + int(n)
	}
	if pos+11 > len(p) {
		return myCol{}, false
	}
	const unsigned = 0x20 // UNSIGNED_FLAG
	return myCol{typ: p[pos+7], unsigned: binary.LittleEndian.Uint16(p[pos+8:])&unsigned != 0, decimals: p[pos+10]}, true
}

func (m *myWire) queryString(q string) (affected, rows int64, err error) {
	b := append(m.start(0x03), q...)
	if err := m.send(b); err != nil {
		return 0, 0, err
	}
	return m.reply()
}

// prepare sends COM_STMT_PREPARE and reads the statement's id, its
// parameter count and its result columns (into *cols).
func (m *myWire) prepare(q string, cols *[]myCol) (id uint32, nparams int, err error) {
	if err := m.send(append(m.start(0x16), q...)); err != nil {
		return 0, 0, err
	}
	p, err := m.next()
	if err != nil {
		return 0, 0, err
	}
	if p[0] == 0xff {
		return 0, 0, errPacket(p)
	}
	if p[0] != 0x00 || len(p) < 9 {
		return 0, 0, m.lost(errors.New("mysql: malformed prepare reply"))
	}
	id = binary.LittleEndian.Uint32(p[1:])
	ncols := int(binary.LittleEndian.Uint16(p[5:]))
	nparams = int(binary.LittleEndian.Uint16(p[7:]))
	*cols = (*cols)[:0]
	for i, n := range []int{nparams, ncols} {
		if n == 0 {
			continue
		}
		if i == 1 {
			if _, err := m.columns(cols, n, true); err != nil {
				return 0, 0, err
			}
		} else {
			for range n {
				if _, err := m.next(); err != nil {
					return 0, 0, err
				}
			}
		}
		if !m.deprecateEOF() {
			if _, err := m.next(); err != nil {
				return 0, 0, err
			}
		}
	}
	return id, nparams, nil
}

// MySQL's column types, as COM_STMT_EXECUTE declares its parameters.
const (
	myTypeTiny     = 0x01
	myTypeDouble   = 0x05
	myTypeNull     = 0x06
	myTypeLongLong = 0x08
	myTypeString   = 0xfe
)

// execute runs statement id with args (COM_STMT_EXECUTE, parameters in the
// binary protocol). The parameters' types go with the first execution and
// whenever they change, as libmariadb sends them: the server keeps the
// last ones (*types holds what it was sent; nil after a failure, so that
// they go again).
//
// With rs set, the rows go to rs (QueryEach).
func (m *myWire) execute(id uint32, nparams int, types *[]byte, args []Arg, rs *myRows) (affected, rows int64, err error) {
	if len(args) != nparams {
		return 0, 0, fmt.Errorf("the statement takes %d arguments, got %d", nparams, len(args))
	}
	b := m.start(0x17)
	b = binary.LittleEndian.AppendUint32(b, id)
	b = append(b, 0)                           // no cursor
	b = binary.LittleEndian.AppendUint32(b, 1) // iterations
	if nparams > 0 {
		nulls := len(b)
		for range (nparams + 7) / 8 {
			b = append(b, 0)
		}
		bound := len(b)
		b = append(b, 1) // the types follow
		for i, a := range args {
			switch a.kind {
			case kNull:
				b[nulls+i/8] |= 1 << (i % 8)
				b = append(b, myTypeNull, 0)
			case kInt:
				b = append(b, myTypeLongLong, 0)
			case kUint:
				b = append(b, myTypeLongLong, 0x80)
			case kFloat:
				b = append(b, myTypeDouble, 0)
			case kBool:
				b = append(b, myTypeTiny, 0)
			default:
				b = append(b, myTypeString, 0)
			}
		}
		if sent := b[bound+1:]; bytes.Equal(sent, *types) {
			b[bound] = 0 // the server has these types
			b = b[:bound+1]
		} else {
			*types = append((*types)[:0], sent...)
		}
		for _, a := range args {
			switch a.kind {
			case kInt, kUint, kFloat:
				b = binary.LittleEndian.AppendUint64(b, uint64(a.i))
			case kBool:
				b = append(b, byte(a.i))
			case kString:
				b = append(appendLenenc(b, uint64(len(a.s))), a.s...)
			case kBytes:
				b = append(appendLenenc(b, uint64(len(a.b))), a.b...)
			case kTime:
				n := len(b)
				b = append(b, 0) // room for the length (26 bytes at most)
				b = a.t.UTC().AppendFormat(b, "2006-01-02 15:04:05.999999")
				b[n] = byte(len(b) - n - 1)
			}
		}
	}
	if err := m.send(b); err != nil {
		*types = nil
		return 0, 0, err
	}
	affected, rows, err = m.result(rs)
	if err != nil {
		*types = nil
	}
	return affected, rows, err
}
