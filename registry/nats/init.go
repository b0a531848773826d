package nats

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/registry/format"
)

// MinServer is the oldest server the engine runs on: per-message TTL,
// subject delete markers and the server's time in stream info.
const MinServer = "2.12.0"

// Template files Init seeds the namespace from (the coordination tree's
// template built into coord).
const (
	tmplRegistry = "active_work_registry.json"
	tmplConfig   = "config.json"
	tmplDepMap   = "dependency_map.json"
	tmplQuota    = "quota.json"
)

// Init creates the namespace raw names if it is missing: its bucket and
// streams (file storage, but for the commit mutex and the heartbeats,
// which are in memory; replicated three times when the server is part of
// a cluster), then its registry, config, dependency map and quota from
// tmpl, and last its meta key (a namespace without one does not exist for
// Open). It is idempotent and never overwrites anything; it returns what
// it created.
func Init(ctx context.Context, raw string, tmpl fs.FS, opt Options) (where string, created []string, err error) {
	u, err := ParseURL(raw)
	if err != nil {
		return "", nil, err
	}
	b, err := dial(ctx, u, opt)
	if err != nil {
		return "", nil, err
	}
	defer b.Close()
	created, err = b.create(ctx, tmpl, 0)
	return b.Where(), created, err
}

// create makes the streams and seeds the keys; base is the meta's base.
func (b *Backend) create(ctx context.Context, tmpl fs.FS, base int64) ([]string, error) {
	if err := b.checkVersion(); err != nil {
		return nil, err
	}
	// Creating a replicated stream waits for its three nodes to agree: a
	// loaded cluster may take longer than one request's timeout.
	js, err := jetstream.New(b.nc, jetstream.WithDefaultTimeout(30*time.Second))
	if err != nil {
		return nil, b.ioErr(err, "")
	}
	replicas := 1
	if b.nc.ConnectedClusterName() != "" {
		replicas = 3
	}
	var created []string
	if _, err := b.w.streamInfo(ctx, b.names.kv); errors.Is(err, errNoStream) {
		err := b.ensureStream(ctx, b.names.kv, func(ctx context.Context) error {
			_, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
				Bucket:         b.names.bucket,
				Description:    "coord namespace " + b.url.Namespace,
				History:        1,
				Storage:        jetstream.FileStorage,
				Replicas:       replicas,
				LimitMarkerTTL: time.Minute,
			})
			return err
		})
		if err != nil {
			return created, b.createErr(err, "bucket "+b.names.bucket, replicas)
		}
		created = append(created, "bucket "+b.names.bucket)
	} else if err != nil {
		return created, b.ioErr(err, "")
	}
	for _, s := range []struct{ name, subj, what string }{
		{b.names.log, b.names.logSubj, "the coordination log"},
		{b.names.arc, b.names.arcSubj, "archived tasks"},
	} {
		if _, err := b.w.streamInfo(ctx, s.name); !errors.Is(err, errNoStream) {
			if err != nil {
				return created, b.ioErr(err, "")
			}
			continue
		}
		err := b.ensureStream(ctx, s.name, func(ctx context.Context) error {
			_, err := js.CreateStream(ctx, jetstream.StreamConfig{
				Name:        s.name,
				Description: "coord namespace " + b.url.Namespace + ": " + s.what,
				Subjects:    []string{s.subj},
				Storage:     jetstream.FileStorage,
				Replicas:    replicas,
				AllowDirect: true,
				Discard:     jetstream.DiscardOld,
				MaxMsgs:     -1,
				MaxBytes:    -1,
				MaxAge:      0,
			})
			return err
		})
		if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return created, b.createErr(err, "stream "+s.name, replicas)
		}
		created = append(created, "stream "+s.name)
	}
	if _, err := b.w.streamInfo(ctx, b.names.backup); errors.Is(err, errNoStream) {
		if err := b.makeBackupStream(ctx, js, replicas); err != nil {
			return created, err
		}
		created = append(created, "stream "+b.names.backup)
	} else if err != nil {
		return created, b.ioErr(err, "")
	}
	for _, m := range []struct {
		name string
		cfg  jetstream.StreamConfig
	}{{b.names.mutex, b.mutexConfig(replicas)}, {b.names.beats, b.beatsConfig(replicas)}} {
		if _, err := b.w.streamInfo(ctx, m.name); errors.Is(err, errNoStream) {
			err := b.ensureStream(ctx, m.name, func(ctx context.Context) error {
				_, err := js.CreateStream(ctx, m.cfg)
				return err
			})
			if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
				return created, b.createErr(err, "stream "+m.name, replicas)
			}
			if err == nil && m.name == b.names.beats {
				// A new stream misses nothing: no agent counts as seen at
				// its creation.
				if _, err := b.bootMark(ctx, false); err != nil {
					return created, err
				}
			}
			created = append(created, "stream "+m.name)
		} else if err != nil {
			return created, b.ioErr(err, "")
		}
	}
	for _, k := range []struct{ key, file string }{
		{keyRegistry, tmplRegistry}, {keyConfig, tmplConfig}, {keyDepMap, tmplDepMap}, {keyQuota, tmplQuota},
	} {
		data, err := fs.ReadFile(tmpl, k.file)
		if err != nil {
			return created, coord.Errorf(coord.CodeIO, "the built-in template has no %s: %v", k.file, err)
		}
		ok, err := b.createKey(ctx, k.key, data)
		if err != nil {
			return created, err
		}
		if ok {
			created = append(created, "key "+k.key)
		}
	}
	m, _ := json.Marshal(meta{Version: 1, Base: base})
	ok, err := b.createKey(ctx, keyMeta, m)
	if err != nil {
		return created, err
	}
	if ok {
		created = append(created, "key "+keyMeta)
		b.meta = meta{Version: 1, Base: base}
	}
	return created, nil
}

// Backups is how many revisions of the registry before the current one
// the backup stream keeps (it holds the current one too).
const Backups = 3

// makeBackupStream makes the stream that keeps the registry's last
// revisions: it sources the registry's key from the bucket, so the
// server itself copies every commit there (no client sends anything
// twice), and keeps Backups+1 of them. A namespace made before it existed
// works without it (no backups) until 'coord init' or 'coord doctor
// --repair' makes it; every coord version may use the namespace then, as
// the bucket itself is unchanged.
func (b *Backend) makeBackupStream(ctx context.Context, js jetstream.JetStream, replicas int) error {
	err := b.ensureStream(ctx, b.names.backup, func(ctx context.Context) error {
		_, err := js.CreateStream(ctx, jetstream.StreamConfig{
			Name:              b.names.backup,
			Description:       "coord namespace " + b.url.Namespace + ": the registry's last revisions ('coord doctor --repair' restores from them)",
			Sources:           []*jetstream.StreamSource{{Name: b.names.kv, FilterSubject: b.names.pre + keyRegistry}},
			Storage:           jetstream.FileStorage,
			Replicas:          replicas,
			MaxMsgsPerSubject: Backups + 1,
			Discard:           jetstream.DiscardOld,
			AllowDirect:       true,
			MaxMsgs:           -1,
			MaxBytes:          -1,
		})
		return err
	})
	if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return b.createErr(err, "stream "+b.names.backup, replicas)
	}
	return nil
}

// The streams kept in memory: the commit mutex and the heartbeats. A
// single server does not keep a memory stream over a restart (a cluster
// does, empty): a client that finds one missing makes it again
// (ensureMemStream).

func (b *Backend) mutexConfig(replicas int) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:                 b.names.mutex,
		Description:          "coord namespace " + b.url.Namespace + ": the commit mutex (advisory)",
		Subjects:             []string{b.names.mutexSubject(">")},
		Storage:              jetstream.MemoryStorage,
		Replicas:             replicas,
		MaxMsgsPerSubject:    1,
		Discard:              jetstream.DiscardNew,
		DiscardNewPerSubject: true,
		AllowMsgTTL:          true,
		AllowDirect:          true,
		MaxMsgs:              -1,
		MaxBytes:             -1,
	}
}

// beatsConfig: heartbeats in memory, so a beat is not synced to disk (a
// claim writes two), and a restart loses them; the boot key then says
// since when the stream is complete, and an agent without a beat counts as
// seen then (beats.go).
func (b *Backend) beatsConfig(replicas int) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:              b.names.beats,
		Description:       "coord namespace " + b.url.Namespace + ": heartbeats (lost on a restart: see its boot key)",
		Subjects:          []string{b.names.beatPre + ">"},
		Storage:           jetstream.MemoryStorage,
		Replicas:          replicas,
		MaxMsgsPerSubject: 1,
		Discard:           jetstream.DiscardOld,
		AllowDirect:       true,
		MaxMsgs:           -1,
		MaxBytes:          -1,
	}
}

// ensureMemStream makes the memory stream name (b.names.mutex or
// b.names.beats) if it is missing while the namespace exists: nil when it
// is there now, the namespace's absence, or why it could not be made.
func (b *Backend) ensureMemStream(ctx context.Context, name string) error {
	if _, err := b.w.streamInfo(ctx, name); !errors.Is(err, errNoStream) {
		return nil // there (or the server cannot tell now: the caller retries)
	}
	if b.streamsMissing() {
		return b.noNamespace()
	}
	js, err := jetstream.New(b.nc, jetstream.WithDefaultTimeout(30*time.Second))
	if err != nil {
		return b.ioErr(err, "")
	}
	replicas := 1
	if b.clustered {
		replicas = 3
	}
	cfg := b.beatsConfig(replicas)
	if name == b.names.mutex {
		cfg = b.mutexConfig(replicas)
	}
	if _, err := js.CreateStream(ctx, cfg); err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return b.createErr(err, "stream "+name, replicas)
	}
	return nil
}

// createKey stores data under key if the key has never been written (or
// holds only a marker); ok reports whether it did.
func (b *Backend) createKey(ctx context.Context, key string, data []byte) (bool, error) {
	m, err := b.readLast(ctx, b.names.pre+key)
	if err != nil {
		return false, b.ioErr(err, "")
	}
	if m != nil && !m.deleted() {
		return false, nil
	}
	base := &doc{key: key}
	if m != nil {
		base.seq = m.seq
	}
	_, err = b.commit(ctx, base, data, 0, nil)
	if errors.Is(err, errConflict) {
		return false, nil // someone else created it meanwhile
	}
	return err == nil, err
}

func (b *Backend) createErr(err error, what string, replicas int) error {
	if replicas > 1 && (strings.Contains(err.Error(), "insufficient resources") || strings.Contains(err.Error(), "replicas")) {
		return coord.Errorf(coord.CodeIO, "%s: cannot create %s with %d replicas: %v", b.url, what, replicas, err).
			WithHint("a cluster needs at least 3 JetStream nodes running for replicated storage")
	}
	return coord.Errorf(coord.CodeIO, "%s: cannot create %s: %s", b.url, what, coord.OneLine(err.Error())).
		WithHint("check the account's JetStream limits and permissions")
}

// Creating one stream may take createBudget in all, each attempt
// createAttempt. A replicated stream is answered once its nodes agree,
// which a loaded cluster or a leader election can delay past one
// request's timeout, and the answer can be lost while the stream is made.
const (
	createBudget  = 2 * time.Minute
	createAttempt = 30 * time.Second
)

// ensureStream runs create, which makes the stream name and is accepted
// again with the same configuration, until it is answered or the stream
// is found.
func (b *Backend) ensureStream(ctx context.Context, name string, create func(context.Context) error) error {
	return ensure(ctx, createBudget, createAttempt, create, func(ctx context.Context) bool {
		_, err := b.w.streamInfo(ctx, name)
		return err == nil
	})
}

// ensure runs create, each attempt bounded by attempt, until it is
// answered, refused, or exists finds what it makes: an attempt that got no
// answer (unanswered) may have landed, so exists is asked before create is
// sent again. After budget, the last attempt's error.
func ensure(ctx context.Context, budget, attempt time.Duration, create func(context.Context) error, exists func(context.Context) bool) error {
	p := newPacer(time.Now(), budget)
	for {
		actx, cancel := context.WithTimeout(ctx, attempt)
		err := create(actx)
		cancel()
		if err == nil || !unanswered(err) || ctx.Err() != nil {
			return err
		}
		if exists(ctx) {
			return nil
		}
		if !p.wait(ctx) {
			return err
		}
	}
}

// unanswered reports whether a JetStream API request may have been carried
// out without its answer reaching us: no answer in time, a lost
// connection, or JetStream busy electing a leader.
func unanswered(err error) bool {
	return isAPI(err, errCodeNotAvailable) || ambiguous(err)
}

// checkVersion refuses a server older than MinServer.
func (b *Backend) checkVersion() error {
	v := b.nc.ConnectedServerVersion()
	if !versionAtLeast(v, MinServer) {
		return coord.Errorf(coord.CodeIO, "%s: the server runs NATS %s; coord needs %s or later", b.url, v, MinServer).
			WithHint("upgrade the server, or run 'coord hub'")
	}
	return nil
}

// versionAtLeast compares dotted versions ("2.12.1", "2.14.0-beta").
func versionAtLeast(v, min string) bool {
	parse := func(s string) [3]int {
		var out [3]int
		s, _, _ = strings.Cut(strings.TrimPrefix(s, "v"), "-")
		for i, p := range strings.SplitN(s, ".", 3) {
			out[i], _ = strconv.Atoi(p)
		}
		return out
	}
	a, m := parse(v), parse(min)
	for i := range a {
		if a[i] != m[i] {
			return a[i] > m[i]
		}
	}
	return true
}

// ReplaceConfig replaces the namespace's settings with data, config.json's
// content, after reading it strictly (a file that would not load is
// refused, exit 2 naming it, and nothing is written). Commands that are
// running keep the settings they read when they started.
func (b *Backend) ReplaceConfig(ctx context.Context, data []byte) error {
	cfg, err := format.ParseConfig("config", data)
	if err != nil {
		return coord.Errorf(coord.CodeIO, "%v", err).WithHint("fix it and try again; nothing was written")
	}
	err = b.update(ctx, "the config", func(ctx context.Context) (*doc, error) {
		docs, err := b.readDocs(ctx, keyConfig)
		if err != nil {
			return nil, err
		}
		return docs[keyConfig], nil
	}, func(*doc) ([]byte, error) { return data, nil })
	if err == nil {
		b.cfg, b.cfgErr = cfg, nil
	}
	return err
}

// SetConfig changes one key of the namespace's config key with a
// compare-and-set (retried while other writers change it, up to the lock
// wait): the stored settings are read strictly, changed
// (format.SetSetting) and read back strictly before they are written; on
// any error nothing is written. "backend" is refused: it names where a
// project lives, which only a checkout's own config.json can say.
func (b *Backend) SetConfig(ctx context.Context, key string, value json.RawMessage) (coord.Config, error) {
	if key == "backend" {
		return coord.Config{}, coord.Errorf(coord.CodeUsage, "backend is not a setting of a hub's project: it names where a project lives").
			WithHint("set it in your checkout's .rotd/coordination/config.json, or use --backend or COORD_BACKEND")
	}
	var cfg coord.Config
	err := b.update(ctx, "the config", func(ctx context.Context) (*doc, error) {
		docs, err := b.readDocs(ctx, keyConfig)
		if err != nil {
			return nil, err
		}
		return docs[keyConfig], nil
	}, func(d *doc) ([]byte, error) {
		out, c, changed, err := format.SetSetting(b.where(keyConfig), d.data, key, value)
		if err != nil {
			if coord.CodeOf(err) == coord.CodeUsage {
				return nil, err
			}
			return nil, coord.Errorf(coord.CodeIO, "%v", err).WithHint("fix the config key ('coord doctor' names it)")
		}
		cfg = c
		if !changed {
			return nil, nil
		}
		return out, nil
	})
	if err != nil {
		return coord.Config{}, err
	}
	b.cfg, b.cfgErr = cfg, nil
	return cfg, nil
}

// ConfigData returns the namespace's config key as it is stored (nil
// when there is none).
func (b *Backend) ConfigData(ctx context.Context) ([]byte, error) {
	docs, err := b.readDocs(ctx, keyConfig)
	if err != nil {
		return nil, err
	}
	return docs[keyConfig].data, nil
}
