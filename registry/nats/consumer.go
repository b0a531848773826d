package nats

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Consumers: the engine's reads that are streams of messages rather than
// a few keys go through nats.go's ordered consumers (ephemeral, in order,
// recreated by nats.go after a gap).

// lastByConsumer reads the last message of every subject matching
// filters with an ordered consumer: the fallback of a multi-subject read
// past the server's per-read limit.
func (b *Backend) lastByConsumer(ctx context.Context, stream string, filters []string) ([]*msg, error) {
	js, err := jetstream.New(b.nc)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, IOBudget)
	defer cancel()
	cons, err := js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{
		FilterSubjects: filters,
		DeliverPolicy:  jetstream.DeliverLastPerSubjectPolicy,
	})
	if err != nil {
		return nil, err
	}
	info := cons.CachedInfo()
	pending := uint64(0)
	if info != nil {
		pending = info.NumPending
	}
	var out []*msg
	for pending > 0 {
		batch, err := cons.Fetch(int(min(pending, 1000)), jetstream.FetchMaxWait(RequestTimeout))
		if err != nil {
			return nil, err
		}
		n := 0
		for m := range batch.Messages() {
			md, err := m.Metadata()
			if err != nil {
				return nil, err
			}
			out = append(out, &msg{subject: m.Subject(), seq: md.Sequence.Stream, at: md.Timestamp, hdr: m.Headers(), data: m.Data()})
			pending = md.NumPending
			n++
		}
		if err := batch.Error(); err != nil {
			return nil, err
		}
		if n == 0 {
			break
		}
	}
	return out, nil
}

// watch calls fn for every new message (metadata only, no payload) on
// the given subjects of stream until ctx ends, and fn(true) when the
// consumer met an error (messages may have been missed).
func (b *Backend) watch(ctx context.Context, stream string, filters []string, fn func(missed bool)) error {
	js, err := jetstream.New(b.nc)
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, RequestTimeout)
	defer cancel()
	cons, err := js.OrderedConsumer(cctx, stream, jetstream.OrderedConsumerConfig{
		FilterSubjects:    filters,
		DeliverPolicy:     jetstream.DeliverNewPolicy,
		HeadersOnly:       true,
		InactiveThreshold: time.Minute,
	})
	if err != nil {
		return err
	}
	cc, err := cons.Consume(func(jetstream.Msg) { fn(false) },
		jetstream.ConsumeErrHandler(func(jetstream.ConsumeContext, error) { fn(true) }))
	if err != nil {
		return err
	}
	go func() {
		<-ctx.Done()
		cc.Stop()
	}()
	return nil
}
