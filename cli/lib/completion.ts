// Shell completion scripts generated from the commander tree: commands, subcommands and options.
import type { Command } from 'commander';

interface Node {
  path: string;
  subcommands: Array<{ name: string; description: string }>;
  options: Array<{ flag: string; description: string }>;
}

function walk(cmd: Command, prefix: string, into: Node[], inherited: Node['options']): void {
  const own = cmd.options.flatMap((o) => (o.long ? [{ flag: o.long, description: o.description }] : []));
  const options = [...own, ...inherited, { flag: '--help', description: 'show help' }];
  const subs = cmd.commands.filter((c) => c.name() !== 'help');
  into.push({ path: prefix, subcommands: subs.map((c) => ({ name: c.name(), description: c.description() })), options });
  for (const c of subs) walk(c, prefix ? `${prefix} ${c.name()}` : c.name(), into, inherited.length ? inherited : own.filter((o) => o.flag === '--profile'));
}

export function commandTree(program: Command): Node[] {
  const nodes: Node[] = [];
  walk(program, '', nodes, []);
  return nodes;
}

const sq = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

export function bashCompletion(program: Command): string {
  const nodes = commandTree(program);
  const words = nodes.map((n) => `    ${JSON.stringify(n.path)}) echo ${sq([...n.subcommands.map((s) => s.name), ...n.options.map((o) => o.flag)].join(' '))} ;;`);
  const subs = nodes.map((n) => `    ${JSON.stringify(n.path)}) echo ${sq(n.subcommands.map((s) => s.name).join(' '))} ;;`);
  return `# gateway completion for bash: eval "$(gateway completion bash)" (or save it under bash-completion's completions/)
_gateway_words() {
  case "$1" in
${words.join('\n')}
  esac
}
_gateway_subs() {
  case "$1" in
${subs.join('\n')}
  esac
}
_gateway() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" i w
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    case "$w" in -*) continue ;; esac
    if [[ " $(_gateway_subs "$path") " == *" $w "* ]]; then path="\${path:+$path }$w"; fi
  done
  COMPREPLY=($(compgen -W "$(_gateway_words "$path")" -- "$cur"))
}
# \`npx gateway …\` (the command run from a project): completed as gateway, one word on.
_gateway_npx() {
  if ((COMP_CWORD >= 2)) && [[ "\${COMP_WORDS[1]}" == gateway ]]; then
    COMP_WORDS=("\${COMP_WORDS[@]:1}")
    COMP_CWORD=$((COMP_CWORD - 1))
    _gateway
  elif ((COMP_CWORD == 1)); then
    COMPREPLY=($(compgen -W gateway -- "\${COMP_WORDS[1]}"))
  else
    COMPREPLY=()
  fi
}
complete -F _gateway gateway
# npx is left alone when something else already completes it.
complete -p npx >/dev/null 2>&1 || complete -F _gateway_npx npx
`;
}

export function zshCompletion(program: Command): string {
  return `# gateway completion for zsh: eval "$(gateway completion zsh)" (uses zsh's bash completion support)
autoload -U +X bashcompinit && bashcompinit
${bashCompletion(program).split('\n').slice(1).join('\n')}`;
}

export function fishCompletion(program: Command): string {
  const lines = ['# gateway completion for fish: gateway completion fish > ~/.config/fish/completions/gateway.fish', 'complete -c gateway -f'];
  for (const n of commandTree(program)) {
    const parts = n.path ? n.path.split(' ') : [];
    const here = parts.length === 0 ? '__fish_use_subcommand' : `__fish_seen_subcommand_from ${parts.at(-1)}`;
    for (const s of n.subcommands) lines.push(`complete -c gateway -n ${sq(here)} -a ${sq(s.name)} -d ${sq(s.description)}`);
    for (const o of n.options) lines.push(`complete -c gateway -n ${sq(parts.length ? here : '__fish_use_subcommand')} -l ${sq(o.flag.slice(2))} -d ${sq(o.description)}`);
  }
  return lines.join('\n') + '\n';
}
