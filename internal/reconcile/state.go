package reconcile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/guide/guide/internal/binrec"
	"github.com/guide/guide/internal/events"
)

// The state file keeps what the indexer knows of the stream between runs: the latest
// event of every document of the project, and the stream sequence that knowledge is
// exact at (every event up to it is in it). A run then reads from the stream only the
// events after that sequence, instead of every document's latest event. The stream stays
// the truth: a file that is missing, unreadable, corrupt, of another stream or project,
// ahead of the stream or too far behind it is set aside and the stream read whole.

// StateFileName is the state file's name, beside the stream's store (whose data folder
// an indexer leaves out of the tree it indexes).
const StateFileName = "indexer.state"

// stateMagic opens every state file; the byte after it is the format's version.
const (
	stateMagic   = "guide-indexer-state\n"
	stateVersion = 1
)

// Why a state file was not used. Summary.StateFile says which, with details.
var (
	errStateMissing  = errors.New("missing")
	errStateCorrupt  = errors.New("corrupt")
	errStateStream   = errors.New("of another stream")
	errStateProject  = errors.New("of another project")
	errStateAhead    = errors.New("ahead of the stream")
	errStateTooStale = errors.New("too far behind the stream")
)

// knownState is what the indexer knows of the stream: the state file's content.
type knownState struct {
	Stream  string // events.ID of the stream
	Project string
	Seq     uint64 // every event up to this sequence is reflected in Docs
	Docs    map[string]knownDoc
}

// encodeState writes st in the state file's format: the magic and version, the stream,
// project, sequence and count, one record per document, and a CRC-32C of all of it.
func encodeState(st knownState) []byte {
	b := make([]byte, 0, 64+len(st.Docs)*140)
	b = append(b, stateMagic...)
	b = append(b, stateVersion)
	b = binrec.AppendString(b, st.Stream)
	b = binrec.AppendString(b, st.Project)
	b = binary.AppendUvarint(b, st.Seq)
	b = binary.AppendUvarint(b, uint64(len(st.Docs)))
	for p, d := range st.Docs {
		b = binrec.AppendString(b, p)
		b = binrec.AppendString(b, string(d.op()))
		b = binary.AppendVarint(b, d.size)
		b = binary.AppendVarint(b, d.sec)
		b = binary.AppendUvarint(b, uint64(d.nsec))
		b = binary.AppendUvarint(b, d.inode)
		b = d.appendHash(binary.AppendUvarint(b, uint64(d.hashLen())))
		b = binrec.AppendString(b, string(d.status))
		b = binary.AppendUvarint(b, d.seq)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crcTable))
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// decodeState reads a state file's bytes. Whatever the bytes, it returns an error
// wrapping errStateCorrupt or a state whose every field was read.
func decodeState(b []byte) (knownState, error) {
	var st knownState
	if len(b) < len(stateMagic)+1+4 || string(b[:len(stateMagic)]) != stateMagic {
		return st, fmt.Errorf("%w: not a state file", errStateCorrupt)
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, crcTable) != sum {
		return st, fmt.Errorf("%w: checksum mismatch", errStateCorrupt)
	}
	if v := body[len(stateMagic)]; v != stateVersion {
		return st, fmt.Errorf("%w: format version %d, want %d", errStateCorrupt, v, stateVersion)
	}
	r := binrec.NewReader(string(body[len(stateMagic)+1:]))
	st.Stream, st.Project, st.Seq = r.String(), r.String(), r.Uvarint()
	n := r.Uvarint()
	// A record takes at least 9 bytes: no count can promise more than the bytes hold.
	if r.Err == nil && n > uint64(r.Len())/9 {
		return knownState{}, fmt.Errorf("%w: %d documents in %d bytes", errStateCorrupt, n, r.Len())
	}
	st.Docs = make(map[string]knownDoc, n)
	for i := uint64(0); i < n && r.Err == nil; i++ {
		var d knownDoc
		// Copies of the path and status: the file's bytes are garbage once read.
		path, op := strings.Clone(r.String()), events.Op(r.String())
		d.size, d.sec = r.Varint(), r.Varint()
		nsec := r.Uvarint()
		d.inode = r.Uvarint()
		d.setHash(r.String())
		d.status, d.seq = events.StatusOf(r.String()), r.Uvarint()
		switch {
		case nsec >= uint64(time.Second):
			r.Fail("nanoseconds out of range")
		case op != events.OpUpsert && op != events.OpDelete:
			r.Fail("an unknown op")
		}
		d.nsec, d.exists = uint32(nsec), op == events.OpUpsert
		if _, dup := st.Docs[path]; dup && r.Err == nil {
			r.Fail("a document twice")
		}
		st.Docs[path] = d
	}
	if r.Err == nil && r.Len() > 0 {
		r.Fail("bytes after the last document")
	}
	if r.Err != nil {
		return knownState{}, fmt.Errorf("%w: %v", errStateCorrupt, r.Err)
	}
	return st, nil
}

// readState reads the state file and checks that it describes this project on the
// stream id, whose last sequence is last, closely enough to build on.
func readState(file, id, project string, last uint64) (knownState, error) {
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return knownState{}, errStateMissing
	}
	if err != nil {
		return knownState{}, fmt.Errorf("%w: %v", errStateCorrupt, err)
	}
	st, err := decodeState(b)
	switch {
	case err != nil:
		return knownState{}, err
	case st.Project != project:
		return knownState{}, fmt.Errorf("%w (%s)", errStateProject, st.Project)
	case st.Stream != id:
		return knownState{}, fmt.Errorf("%w (%s, the stream is %s)", errStateStream, st.Stream, id)
	case st.Seq > last:
		return knownState{}, fmt.Errorf("%w (at %d, the stream ends at %d)", errStateAhead, st.Seq, last)
	case tooStale(st.Seq, last, len(st.Docs)):
		return knownState{}, fmt.Errorf("%w (at %d, the stream ends at %d)", errStateTooStale, st.Seq, last)
	}
	return st, nil
}

// tooStale reports whether reading every event after seq could cost more than reading
// the latest event of each of docs documents: the stream then is read whole.
func tooStale(seq, last uint64, docs int) bool {
	return last-seq > uint64(docs)
}

// writeState replaces the state file with st, atomically: a reader sees the old file or
// the new one, whole, whoever else writes it.
func writeState(file string, st knownState) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(file), filepath.Base(file)+".*.tmp")
	if err != nil {
		return err
	}
	_, err = f.Write(encodeState(st))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), file)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}
