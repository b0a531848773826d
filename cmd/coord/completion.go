package main

import "github.com/urfave/cli/v2"

func completionCommand(e *env) *cli.Command {
	return &cli.Command{Name: "completion", Usage: "print a shell completion script: coord completion bash|zsh", ArgsUsage: "bash|zsh", Action: e.cmdCompletion}
}

// Shell completion: urfave/cli answers --generate-bash-completion with the
// commands and flags that fit; these scripts ask it.
const bashCompletion = `# coord bash completion: source <(coord completion bash)
_coord_complete() {
  local cur opts
  COMPREPLY=()
  cur="${COMP_WORDS[COMP_CWORD]}"
  if [[ "$cur" == "-"* ]]; then
    opts=$("${COMP_WORDS[@]:0:$COMP_CWORD}" "$cur" --generate-bash-completion 2>/dev/null)
  else
    opts=$("${COMP_WORDS[@]:0:$COMP_CWORD}" --generate-bash-completion 2>/dev/null)
  fi
  COMPREPLY=($(compgen -W "${opts}" -- "${cur}"))
  return 0
}
complete -o bashdefault -o default -F _coord_complete coord
`

const zshCompletion = `#compdef coord
# coord zsh completion: source <(coord completion zsh)
_coord() {
  local -a opts
  local cur="${words[-1]}"
  if [[ "$cur" == "-"* ]]; then
    opts=("${(@f)$(${words[@]:0:#words[@]-1} ${cur} --generate-bash-completion 2>/dev/null)}")
  else
    opts=("${(@f)$(${words[@]:0:#words[@]-1} --generate-bash-completion 2>/dev/null)}")
  fi
  if [[ "${opts[1]}" != "" ]]; then
    _describe 'values' opts
  else
    _files
  fi
}
compdef _coord coord
`

func (e *env) cmdCompletion(c *cli.Context) error {
	a, err := e.args(c, "bash|zsh")
	if err != nil {
		return err
	}
	switch a[0] {
	case "bash":
		_, err = e.stdout.Write([]byte(bashCompletion))
	case "zsh":
		_, err = e.stdout.Write([]byte(zshCompletion))
	default:
		return strErr("completion: %q is not bash or zsh", a[0])
	}
	return err
}
