package nats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	gonats "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The wire: the few JetStream requests the engine makes, written against
// the server's API directly (nats.go's KeyValue binds a bucket with a
// stream-info round trip per process, hides message headers, and has no
// multi-key read), so that a command costs only the round trips it needs.

// Headers the engine writes and reads.
const (
	hdrExpectedSubjSeq = "Nats-Expected-Last-Subject-Sequence"
	hdrTTL             = "Nats-TTL"
	hdrMarkerReason    = "Nats-Marker-Reason"
	hdrKVOperation     = "KV-Operation"
	hdrStatus          = "Status"
	hdrDescription     = "Description"
	hdrSubject         = "Nats-Subject"
	hdrSequence        = "Nats-Sequence"
	hdrTimeStamp       = "Nats-Time-Stamp"
	hdrNumPending      = "Nats-Num-Pending"
	// hdrTxn names the transaction that wrote a document, and hdrRecent
	// the ones before it ("id:rev …", newest first): after an answer that
	// never came, a writer reads them to learn whether its commit landed.
	hdrTxn    = "Coord-Txn"
	hdrRecent = "Coord-Recent"
)

// An error a JetStream API call answers is nats.go's *jetstream.APIError,
// told apart by its jetstream.JSErrCode… value. The codes nats.go does
// not export are named here after the server's own identifiers
// (nats-server, server/jetstream_errors_generated.go).
const (
	// errCodeNotAvailable: "JetStream system temporarily unavailable", a
	// cluster electing its meta leader (JSClusterNotAvailErr; exported by
	// nats.go only as the core package's nats.JSErrCodeJetStreamNotAvailable).
	errCodeNotAvailable = jetstream.ErrorCode(gonats.JSErrCodeJetStreamNotAvailable)
	// errCodeIncomplete: "incomplete results" (JSClusterIncompleteErr).
	errCodeIncomplete jetstream.ErrorCode = 10004
	// errCodeSequenceNotMatch: "expected stream sequence does not match",
	// a replica catching up (JSStreamSequenceNotMatchErr).
	errCodeSequenceNotMatch jetstream.ErrorCode = 10063
	// errCodeLastSeqNotReady: "expected last sequence per subject
	// temporarily not ready", a new stream leader
	// (JSStreamExpectedLastSeqPerSubjectNotReady).
	errCodeLastSeqNotReady jetstream.ErrorCode = 10163
)

// apiMessage is an API error as the engine words it: the server's
// description and its code.
func apiMessage(ae *jetstream.APIError) string {
	return fmt.Sprintf("%s (error %d)", ae.Description, ae.ErrorCode)
}

// errConflict is a compare-and-set refused: the key moved since it was
// read.
var errConflict = errors.New("the key changed since it was read")

// errNoStream means the request reached no stream: the namespace does not
// exist (or JetStream is off); the caller says which.
var errNoStream = errors.New("no such stream")

// msg is the last message of one subject as a direct get returned it.
type msg struct {
	subject string
	seq     uint64
	at      time.Time // the server's timestamp
	hdr     gonats.Header
	data    []byte
}

// deleted reports whether the message is a delete, purge or TTL marker
// rather than a value.
func (m *msg) deleted() bool {
	if m == nil || len(m.hdr) == 0 {
		return false
	}
	return m.hdr.Get(hdrKVOperation) != "" || m.hdr.Get(hdrMarkerReason) != ""
}

// wire is one connection's view of one namespace's streams.
type wire struct {
	nc      *gonats.Conn
	timeout time.Duration // per request

	mu       sync.Mutex
	next     uint64
	inflight map[uint64]context.CancelCauseFunc // the requests under way
}

// errConnLost ends a request that was in flight when the connection was
// lost: its answer will never come, and whether it was applied is
// unknown (ambiguous).
var errConnLost = fmt.Errorf("the connection to the server was lost: %w", gonats.ErrDisconnected)

// disconnected ends every request in flight (the connection's
// DisconnectErrHandler): nats.go would let each wait for its timeout
// while others, reconnected, go on. A commit whose answer was lost reads
// back at once whether it landed, while the commits that followed it are
// still few enough to name it. Requests sent later wait for the
// reconnection as usual.
func (w *wire) disconnected() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for id, cancel := range w.inflight {
		cancel(errConnLost)
		delete(w.inflight, id)
	}
}

// withTimeout bounds one request, and ends it with errConnLost (as its
// context's cause: see lostOr) if the connection is lost meanwhile.
func (w *wire) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancelT := context.WithTimeout(ctx, w.timeout)
	ctx, cancelC := context.WithCancelCause(ctx)
	w.mu.Lock()
	if w.inflight == nil {
		w.inflight = map[uint64]context.CancelCauseFunc{}
	}
	id := w.next
	w.next++
	w.inflight[id] = cancelC
	w.mu.Unlock()
	return ctx, func() {
		w.mu.Lock()
		delete(w.inflight, id)
		w.mu.Unlock()
		cancelC(nil)
		cancelT()
	}
}

// lostOr is errConnLost when the request was ended because the connection
// was lost, else err.
func lostOr(ctx context.Context, err error) error {
	if err != nil && errors.Is(context.Cause(ctx), errConnLost) {
		return errConnLost
	}
	return err
}

// request sends a JetStream API request and decodes the JSON answer into
// v; an error the API answered comes back as *jetstream.APIError.
func (w *wire) request(ctx context.Context, subject string, req, v any) error {
	var data []byte
	if req != nil {
		var err error
		if data, err = json.Marshal(req); err != nil {
			return err
		}
	}
	ctx, cancel := w.withTimeout(ctx)
	defer cancel()
	resp, err := w.nc.RequestWithContext(ctx, subject, data)
	if err != nil {
		return lostOr(ctx, err)
	}
	var env struct {
		Error *jetstream.APIError `json:"error"`
	}
	if err := json.Unmarshal(resp.Data, &env); err != nil {
		return fmt.Errorf("unreadable answer to %s: %v", subject, err)
	}
	if env.Error != nil {
		return env.Error
	}
	if v != nil {
		return json.Unmarshal(resp.Data, v)
	}
	return nil
}

// streamInfo is the part of a stream's info the engine reads.
type streamInfo struct {
	Config struct {
		Name              string        `json:"name"`
		Storage           string        `json:"storage"`
		Replicas          int           `json:"num_replicas"`
		AllowMsgTTL       bool          `json:"allow_msg_ttl"`
		MaxMsgsPerSubject int64         `json:"max_msgs_per_subject"`
		Duplicates        time.Duration `json:"duplicate_window"`
		AllowDirect       bool          `json:"allow_direct"`
		MaxMsgSize        int32         `json:"max_msg_size"`
		PersistMode       string        `json:"persist_mode"`
	} `json:"config"`
	State struct {
		Msgs     uint64 `json:"messages"`
		Bytes    uint64 `json:"bytes"`
		FirstSeq uint64 `json:"first_seq"`
		LastSeq  uint64 `json:"last_seq"`
	} `json:"state"`
	Cluster *struct {
		Name     string `json:"name"`
		Leader   string `json:"leader"`
		Replicas []struct {
			Name    string `json:"name"`
			Current bool   `json:"current"`
			Offline bool   `json:"offline"`
			Lag     uint64 `json:"lag"`
		} `json:"replicas"`
	} `json:"cluster"`
	// TimeStamp is the server's clock when it answered.
	TimeStamp time.Time `json:"ts"`
}

func (w *wire) streamInfo(ctx context.Context, stream string) (*streamInfo, error) {
	var si streamInfo
	err := w.request(ctx, "$JS.API.STREAM.INFO."+stream, nil, &si)
	if isAPI(err, jetstream.JSErrCodeStreamNotFound) {
		return nil, errNoStream
	}
	return &si, err
}

// status reads a direct get's status header: "" for a message.
func status(m *gonats.Msg) (code, desc string) {
	if len(m.Data) == 0 && len(m.Header) > 0 {
		return m.Header.Get(hdrStatus), m.Header.Get(hdrDescription)
	}
	return "", ""
}

// toMsg decodes one direct-get answer.
func toMsg(m *gonats.Msg) (*msg, error) {
	seq, err := strconv.ParseUint(m.Header.Get(hdrSequence), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("a direct get answered without a sequence")
	}
	at, err := time.Parse(time.RFC3339Nano, m.Header.Get(hdrTimeStamp))
	if err != nil {
		return nil, fmt.Errorf("a direct get answered without a timestamp")
	}
	return &msg{subject: m.Header.Get(hdrSubject), seq: seq, at: at, hdr: m.Header, data: m.Data}, nil
}

// last returns the last message of subject in stream (a value or a
// marker), or nil when the subject has none.
func (w *wire) last(ctx context.Context, stream, subject string) (*msg, error) {
	ctx, cancel := w.withTimeout(ctx)
	defer cancel()
	resp, err := w.nc.RequestWithContext(ctx, "$JS.API.DIRECT.GET."+stream+"."+subject, nil)
	if errors.Is(err, gonats.ErrNoResponders) {
		return nil, errNoStream
	}
	if err != nil {
		return nil, lostOr(ctx, err)
	}
	switch code, desc := status(resp); code {
	case "":
		return toMsg(resp)
	case "404":
		return nil, nil
	default:
		return nil, fmt.Errorf("direct get of %s: %s %s", subject, code, desc)
	}
}

// errTooMany is a multi-subject read that matched more subjects than one
// answer may carry (the server's limit is 1,024).
var errTooMany = errors.New("too many subjects for one read")

// multiLast returns the last message of every subject matching filters
// (wildcards allowed), markers included, in stream order. It is one
// round trip; more than 1,024 subjects is errTooMany.
func (w *wire) multiLast(ctx context.Context, stream string, filters []string) ([]*msg, error) {
	out, _, err := w.batch(ctx, stream, map[string]any{"multi_last": filters})
	return out, err
}

// lastEach returns the last message of each subject (no wildcards),
// skipping subjects that have none: one direct get per subject, all sent
// at once. A multi-subject read is one request, but the server answers it
// in 0.1 to 10 ms where a single get takes 0.1 ms; what it loses is the
// one snapshot across subjects, which no caller of it needs.
func (w *wire) lastEach(ctx context.Context, stream string, subjects []string, get func(ctx context.Context, stream, subject string) (*msg, error)) ([]*msg, error) {
	if get == nil {
		get = w.last
	}
	out := make([]*msg, len(subjects))
	errs := make([]error, len(subjects))
	var wg sync.WaitGroup
	for i, s := range subjects {
		wg.Add(1)
		go func() { defer wg.Done(); out[i], errs[i] = get(ctx, stream, s) }()
	}
	wg.Wait()
	var got []*msg
	for i := range out {
		if errs[i] != nil {
			return nil, errs[i]
		}
		if out[i] != nil {
			got = append(got, out[i])
		}
	}
	return got, nil
}

// literal reports whether every filter names one subject (no wildcard),
// and there are few enough to read one by one.
func literal(filters []string) bool {
	if len(filters) > 64 {
		return false
	}
	for _, f := range filters {
		if strings.ContainsAny(f, "*>") {
			return false
		}
	}
	return true
}

// batchFrom returns up to n messages of stream from sequence seq on
// (n <= 0: until the end), following EOB pages.
func (w *wire) batchFrom(ctx context.Context, stream string, seq uint64, n int, fn func(*msg) error) error {
	for {
		req := map[string]any{"seq": seq, "batch": 1000}
		if n > 0 && n < 1000 {
			req["batch"] = n
		}
		page, pending, err := w.batch(ctx, stream, req)
		if err != nil || len(page) == 0 {
			return err
		}
		for _, m := range page {
			if err := fn(m); err != nil {
				return err
			}
			seq = m.seq + 1
		}
		if n > 0 {
			if n -= len(page); n <= 0 {
				return nil
			}
		}
		// The last page of the stream says so in its EOB; a short page
		// (max bytes) goes on from where it stopped.
		if pending == 0 {
			return nil
		}
	}
}

// batch runs one direct get that answers with several messages and an
// end-of-batch marker, which says how many more match (pending).
func (w *wire) batch(ctx context.Context, stream string, req map[string]any) (out []*msg, pending uint64, err error) {
	data, _ := json.Marshal(req)
	ctx, cancel := w.withTimeout(ctx)
	defer cancel()
	inbox := w.nc.NewRespInbox()
	sub, err := w.nc.SubscribeSync(inbox)
	if err != nil {
		return nil, 0, err
	}
	defer sub.Unsubscribe()
	if err := w.nc.PublishRequest("$JS.API.DIRECT.GET."+stream, inbox, data); err != nil {
		return nil, 0, err
	}
	for {
		m, err := sub.NextMsgWithContext(ctx)
		if errors.Is(err, gonats.ErrNoResponders) {
			return nil, 0, errNoStream
		}
		if errors.Is(err, context.DeadlineExceeded) && len(out) == 0 && !w.nc.IsConnected() {
			return nil, 0, gonats.ErrDisconnected
		}
		if err != nil {
			return nil, 0, lostOr(ctx, err)
		}
		code, desc := status(m)
		switch code {
		case "":
			x, err := toMsg(m)
			if err != nil {
				return nil, 0, err
			}
			out = append(out, x)
			continue
		case "204": // end of batch
			pending, _ = strconv.ParseUint(m.Header.Get(hdrNumPending), 10, 64)
			return out, pending, nil
		case "404":
			return out, 0, nil
		case "413":
			return nil, 0, errTooMany
		case "503":
			return nil, 0, errNoStream
		}
		return nil, 0, fmt.Errorf("direct get from %s: %s %s", stream, code, desc)
	}
}

// pubAck is JetStream's answer to a publish.
type pubAck struct {
	Stream    string              `json:"stream"`
	Seq       uint64              `json:"seq"`
	Duplicate bool                `json:"duplicate"`
	Error     *jetstream.APIError `json:"error"`
}

// publish stores data under subject with the given headers and waits for
// the stream's acknowledgement (with sync always on the hub: on disk). A
// compare-and-set the stream refused is errConflict; the other errors are
// the connection's or the API's.
func (w *wire) publish(ctx context.Context, subject string, data []byte, hdr gonats.Header) (uint64, error) {
	ctx, cancel := w.withTimeout(ctx)
	defer cancel()
	resp, err := w.nc.RequestMsgWithContext(ctx, &gonats.Msg{Subject: subject, Data: data, Header: hdr})
	if errors.Is(err, gonats.ErrNoResponders) {
		return 0, errNoStream
	}
	if err != nil {
		return 0, lostOr(ctx, err)
	}
	var ack pubAck
	if err := json.Unmarshal(resp.Data, &ack); err != nil {
		return 0, fmt.Errorf("unreadable acknowledgement from the server: %v", err)
	}
	if ack.Error != nil {
		switch ack.Error.ErrorCode {
		case jetstream.JSErrCodeStreamWrongLastSequence, jetstream.JSErrCodeStreamWrongLastSequenceConstant: // the latter on replicated streams
			return 0, errConflict
		}
		return 0, ack.Error
	}
	return ack.Seq, nil
}

// casHeader returns headers expecting subject's last sequence to be seq
// (0: no message at all).
func casHeader(seq uint64) gonats.Header {
	return gonats.Header{hdrExpectedSubjSeq: []string{strconv.FormatUint(seq, 10)}}
}

// isAPI reports whether err is a JetStream API error with one of codes.
func isAPI(err error, codes ...jetstream.ErrorCode) bool {
	var ae *jetstream.APIError
	return errors.As(err, &ae) && slices.Contains(codes, ae.ErrorCode)
}

// ambiguous reports whether a failed publish may nonetheless have been
// stored: the answer was lost (a timeout, a broken connection), not
// refused.
func ambiguous(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, gonats.ErrTimeout) ||
		errors.Is(err, gonats.ErrConnectionClosed) || errors.Is(err, gonats.ErrConnectionReconnecting) ||
		errors.Is(err, gonats.ErrDisconnected) || strings.Contains(err.Error(), "connection")
}

// lastFromLeader is last answered by the stream's leader (a direct get
// may be answered by a replica that lags): what a writer reads to learn
// whether its commit landed.
func (w *wire) lastFromLeader(ctx context.Context, stream, subject string) (*msg, error) {
	var resp struct {
		Message *struct {
			Subject string    `json:"subject"`
			Seq     uint64    `json:"seq"`
			Hdrs    []byte    `json:"hdrs"`
			Data    []byte    `json:"data"`
			Time    time.Time `json:"time"`
		} `json:"message"`
	}
	err := w.request(ctx, "$JS.API.STREAM.MSG.GET."+stream, map[string]string{"last_by_subj": subject}, &resp)
	switch {
	case isAPI(err, jetstream.JSErrCodeMessageNotFound):
		return nil, nil
	case isAPI(err, jetstream.JSErrCodeStreamNotFound), errors.Is(err, gonats.ErrNoResponders):
		return nil, errNoStream
	case err != nil:
		return nil, err
	case resp.Message == nil:
		return nil, fmt.Errorf("the server answered a message get without a message")
	}
	m := &msg{subject: resp.Message.Subject, seq: resp.Message.Seq, at: resp.Message.Time, data: resp.Message.Data}
	if len(resp.Message.Hdrs) > 0 {
		if m.hdr, err = gonats.DecodeHeadersMsg(resp.Message.Hdrs); err != nil {
			return nil, err
		}
	}
	return m, nil
}
