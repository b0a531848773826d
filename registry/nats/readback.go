package nats

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/registry/format"
)

// No commit ever writes what coord cannot read back (docs/FORMATS.md#reading-strictly). The
// documents go through commit (cas.go), the one commit path, which holds
// each to its reader before anything is sent (checkKey): at most
// maxDocument bytes (what docFrom decompresses), and for the documents a
// reader parses strictly (the dependency map, config, quota, meta) that
// parse; a kv key's value is held to the strict reading files give it. The registry is not parsed again whole on every claim:
// format.Registry.EncodeTo parses back what it writes anew and checks its
// ids (encodeRegistry). Log lines are held to coord.LogLines and archive
// lines to the archive's reader before they are published. What would be
// refused is refused with exit 1, naming the key.

// checkKey refuses data for key when its reader would not take it back.
func (b *Backend) checkKey(key string, data []byte) error {
	if len(data) > maxDocument {
		return coord.Unreadable(b.where(key), fmt.Sprintf("it would be %d bytes, more than the %d coord reads", len(data), maxDocument)).
			WithHint("%s", tooLargeHint(key))
	}
	var err error
	switch key {
	case keyDepMap:
		_, err = format.ParseDepMap(b.where(key), data)
	case keyConfig:
		_, err = format.ParseConfig(b.where(key), data)
	case keyQuota:
		_, err = decodeQuota(b.where(key), data)
	case keyMeta:
		err = format.Unmarshal(b.where(key), data, new(meta))
	default:
		if !strings.HasPrefix(key, preKV) {
			return nil
		}
		// A key's value is read leniently here, but strictly on files
		// (kv.json): hold it to the strict reading, so that the same
		// value is refused on every engine.
		err = format.CheckStrict(b.where(key), data)
	}
	if err != nil {
		why := err.Error()
		var pe *format.ParseError
		if errors.As(err, &pe) {
			why = pe.Msg
		}
		return coord.Unreadable(b.where(key), "it would not read back ("+coord.Clip(coord.OneLine(why), 200)+")")
	}
	return nil
}

// tooLargeHint says what makes key smaller.
func tooLargeHint(key string) string {
	switch {
	case key == keyRegistry:
		return "archive done tasks ('coord archive'), or add fewer or smaller tasks"
	case strings.HasPrefix(key, preKV):
		return "store a smaller value"
	}
	return "make the change smaller"
}

// encodeRegistry is the registry's encoding for a commit; one its reader
// would not take back is refused.
func (b *Backend) encodeRegistry(f *format.Registry) ([]byte, error) {
	data, err := f.Encode()
	var ee *format.EncodeError
	if errors.As(err, &ee) {
		return nil, coord.Unreadable(b.where(keyRegistry), ee.Msg).
			WithHint("this is a bug in coord; please report it with the command that failed")
	}
	return data, err
}

// archiveLine is a task as an archive line, read back as the archive's
// reader reads it.
func (b *Backend) archiveLine(t *coord.Task) ([]byte, error) {
	line, err := format.TaskLine(t)
	if err != nil {
		return nil, b.ioErr(err, "")
	}
	if _, err := format.ParseTaskLine("archive", line); err != nil {
		return nil, coord.Unreadable(b.url.String()+" archive", fmt.Sprintf("task %q would not read back from it (%s)", t.ID, coord.Clip(coord.OneLine(err.Error()), 200)))
	}
	return line, nil
}
