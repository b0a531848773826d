package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"
)

// The project's settings (docs/FORMATS.md#configjson):
// config.json on files, the namespace's config key on a hub. Reading
// and validating them is the application's (app.Service.Settings,
// SetConfigText, over registry/format); storing them the engine's.

func configCommand(e *env) *cli.Command {
	return &cli.Command{Name: "config", Usage: "show and change the project's settings (config.json, or the hub's) on any backend",
		Commands: []*cli.Command{
			{Name: "show", Usage: "every setting with its value in force ((default) when not set)", Action: e.cmdConfigShow},
			{Name: "get", Usage: "print one setting's value in force", ArgsUsage: "KEY", Action: e.cmdConfigGet},
			{Name: "set", Usage: "set a setting (validated as config.json is; nothing written if it is not valid)", ArgsUsage: "KEY VALUE", Action: e.cmdConfigSet},
			{Name: "unset", Usage: "remove a setting: its default applies again", ArgsUsage: "KEY", Action: e.cmdConfigUnset},
		}}
}

func (e *env) cmdConfigShow(_ context.Context, c *cli.Command) error {
	if c.NArg() > 0 {
		return strErr("config show takes no arguments (config get KEY prints one)")
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	list, err := s.Settings(e.ctx)
	if err != nil {
		return err
	}
	if e.json {
		b := []byte("{")
		for i, st := range list {
			if i > 0 {
				b = append(b, ',')
			}
			k, _ := json.Marshal(st.Key)
			b = append(append(append(b, k...), ':'), compactJSON(st.Value)...)
		}
		return e.printRaw(append(b, '}'))
	}
	width := 0
	for _, st := range list {
		width = max(width, len(st.Key))
	}
	for _, st := range list {
		line := fmt.Sprintf("%-*s  %s", width, st.Key, settingText(st.Value))
		switch {
		case !st.Known:
			line += "  (not a coord setting)"
		case !st.Set:
			line += "  (default)"
		}
		e.printf("%s\n", strings.TrimRight(line, " "))
	}
	return nil
}

func (e *env) cmdConfigGet(_ context.Context, c *cli.Command) error {
	a, err := e.args(c, "KEY")
	if err != nil {
		return err
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	st, err := s.Setting(e.ctx, a[0])
	if err != nil {
		return err
	}
	if e.json {
		return e.printRaw(compactJSON(st.Value))
	}
	return e.printRaw([]byte(settingText(st.Value)))
}

func (e *env) cmdConfigSet(_ context.Context, c *cli.Command) error {
	a, err := e.args(c, "KEY", "VALUE")
	if err != nil {
		return err
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	return s.SetConfigText(e.ctx, a[0], a[1])
}

func (e *env) cmdConfigUnset(_ context.Context, c *cli.Command) error {
	a, err := e.args(c, "KEY")
	if err != nil {
		return err
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	return s.UnsetConfig(e.ctx, a[0])
}

// settingText is a setting's value for people: a string as it is, any
// other value as JSON.
func settingText(v json.RawMessage) string {
	var s string
	if bytes.HasPrefix(bytes.TrimSpace(v), []byte(`"`)) && json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(compactJSON(v))
}

func compactJSON(v json.RawMessage) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return v
	}
	return b.Bytes()
}
