package client

import (
	"encoding/binary"
	"fmt"
	"math"
	"net"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// pgWire is the lean path of a PostgreSQL connection, over pgx's low-level
// connection: the extended protocol's Bind, Execute and Sync, encoded by
// pgproto3 into a reused buffer and written to pgconn's socket, and the
// replies read through pgconn's own pgproto3.Frontend, which decodes each
// message in place into a message it reuses. pgconn's ExecStatement does
// the same but allocates the command tag as a new string per statement and
// arms its 15 ms slow-write timer around every write; pgx.Conn above it
// encodes arguments through interfaces and makes a rows object per
// statement. pgx keeps the connection's setup, Prepare, COPY and anything
// rare; the two never interleave (each runs whole request-reply cycles on
// the connection's one goroutine).
type pgWire struct {
	pc     *pgconn.PgConn
	fe     *pgproto3.Frontend
	nc     net.Conn
	bind   pgproto3.Bind
	exec   pgproto3.Execute
	sync   pgproto3.Sync
	vals   [][]byte // the parameters of the Bind being sent (views into buf)
	ends   []int    // where each parameter ends in buf; -1 for NULL
	buf    []byte   // parameter values, as text
	wbuf   []byte   // the messages being sent
	args   []Arg    // Exec's and Query's arguments, converted (reused)
	text   bool     // standard_conforming_strings is on: text statements may carry quoted arguments
	row    Values   // QueryEach's row: a DataRow's values, referenced
	broken error
}

// pgWbufKeep bounds the request buffers kept between statements: they
// grow to the largest request (the load's 500-row INSERTs, about 100 KB),
// and one larger than this is dropped after it.
const pgWbufKeep = 1 << 20

func newPgWire(pc *pgconn.PgConn) *pgWire {
	return &pgWire{pc: pc, fe: pc.Frontend(), nc: pc.Conn(), text: pc.ParameterStatus("standard_conforming_strings") == "on"}
}

// lost marks the connection unusable after err and closes its socket.
func (p *pgWire) lost(err error) error {
	if p.broken == nil {
		p.broken = err
		p.nc.Close()
	}
	return p.broken
}

func (p *pgWire) write(b []byte) error {
	if p.broken != nil {
		return p.broken
	}
	if _, err := p.nc.Write(b); err != nil {
		return p.lost(err)
	}
	return nil
}

// execute runs prepared statement name with args, as text parameters, and
// reads its reply: the rows affected (the command tag's count: for a
// SELECT, the rows it returned) and the rows returned, each handed to
// each if it is not nil.
func (p *pgWire) execute(name string, nparams int, args []Arg, each func(*Values)) (affected, rows int64, err error) {
	if len(args) != nparams {
		return 0, 0, fmt.Errorf("the statement takes %d arguments, got %d", nparams, len(args))
	}
	if cap(p.buf) > pgWbufKeep {
		p.buf = nil
	}
	if cap(p.wbuf) > pgWbufKeep {
		p.wbuf = nil
	}
	p.buf, p.ends, p.vals = p.buf[:0], p.ends[:0], p.vals[:0]
	for _, a := range args {
		if a.kind == kNull {
			p.ends = append(p.ends, -1)
			continue
		}
		p.buf = appendPgText(p.buf, a)
		p.ends = append(p.ends, len(p.buf))
	}
	start := 0
	for _, end := range p.ends {
		if end < 0 {
			p.vals = append(p.vals, nil)
			continue
		}
		p.vals = append(p.vals, p.buf[start:end:end])
		start = end
	}
	p.bind.PreparedStatement, p.bind.Parameters = name, p.vals
	b, err := p.bind.Encode(p.wbuf[:0])
	if err != nil {
		return 0, 0, err
	}
	b, _ = p.exec.Encode(b)
	b, _ = p.sync.Encode(b)
	p.wbuf = b
	if err := p.write(b); err != nil {
		return 0, 0, err
	}
	return p.result(each)
}

// query runs q as a simple-protocol statement, handing its rows to each
// if it is not nil. The Query message is written by hand from bytes:
// pgproto3.Query holds a string, which a statement built in a reused
// buffer would have to be copied into.
func (p *pgWire) query(q []byte, each func(*Values)) (affected, rows int64, err error) {
	b := append(p.wbuf[:0], 'Q', 0, 0, 0, 0)
	b = append(b, q...)
	b = append(b, 0)
	binary.BigEndian.PutUint32(b[1:], uint32(len(b)-1))
	p.wbuf = b
	if err := p.write(b); err != nil {
		return 0, 0, err
	}
	return p.result(each)
}

func (p *pgWire) queryString(q string) (affected, rows int64, err error) {
	b := append(p.wbuf[:0], 'Q', 0, 0, 0, 0)
	b = append(b, q...)
	b = append(b, 0)
	binary.BigEndian.PutUint32(b[1:], uint32(len(b)-1))
	p.wbuf = b
	if err := p.write(b); err != nil {
		return 0, 0, err
	}
	return p.reply()
}

// reply reads messages until ReadyForQuery; the first error the server
// reports is returned once the connection is ready again.
func (p *pgWire) reply() (affected, rows int64, err error) { return p.result(nil) }

// result reads a reply as reply does, and hands each row to each if it is
// not nil: a DataRow's values, referenced where pgproto3 decoded them.
func (p *pgWire) result(each func(*Values)) (affected, rows int64, err error) {
	var first error
	for {
		msg, err := p.fe.Receive()
		if err != nil {
			return affected, rows, p.lost(err)
		}
		switch m := msg.(type) {
		case *pgproto3.DataRow:
			rows++
			if each != nil {
				p.row.cols = m.Values
				each(&p.row)
				p.row.cols = nil
			}
		case *pgproto3.CommandComplete:
			affected += tagRows(m.CommandTag)
		case *pgproto3.ErrorResponse:
			if first == nil {
				first = pgconn.ErrorResponseToPgError(m)
			}
		case *pgproto3.CopyInResponse:
			// A COPY FROM STDIN sent as a plain statement: refuse it, and
			// say where it belongs.
			var f pgproto3.CopyFail
			f.Message = "COPY goes through client.Copy"
			b, _ := f.Encode(nil)
			if err := p.write(b); err != nil {
				return affected, rows, err
			}
		case *pgproto3.ReadyForQuery:
			return affected, rows, first
		}
	}
}

// tagRows is the count at the end of a command tag ("SELECT 3",
// "INSERT 0 1", "UPDATE 2"), 0 if it has none.
func tagRows(tag []byte) int64 {
	i := len(tag)
	for i > 0 && tag[i-1] >= '0' && tag[i-1] <= '9' {
		i--
	}
	if i == len(tag) || i == 0 || tag[i-1] != ' ' {
		return 0
	}
	var n int64
	for _, c := range tag[i:] {
		n = n*10 + int64(c-'0')
	}
	return n
}

// appendPgText writes a in PostgreSQL's text format for a parameter.
func appendPgText(b []byte, a Arg) []byte {
	switch a.kind {
	case kInt:
		return strconv.AppendInt(b, a.i, 10)
	case kUint:
		return strconv.AppendUint(b, uint64(a.i), 10)
	case kFloat:
		f := math.Float64frombits(uint64(a.i))
		switch {
		case math.IsNaN(f):
			return append(b, "NaN"...)
		case math.IsInf(f, 1):
			return append(b, "Infinity"...)
		case math.IsInf(f, -1):
			return append(b, "-Infinity"...)
		}
		return strconv.AppendFloat(b, f, 'g', -1, 64)
	case kBool:
		if a.i != 0 {
			return append(b, 't')
		}
		return append(b, 'f')
	case kString:
		return append(b, a.s...)
	case kBytes:
		return append(b, a.b...)
	case kTime:
		return a.t.AppendFormat(b, time.RFC3339Nano)
	}
	return b
}
