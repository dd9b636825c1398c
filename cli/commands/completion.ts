// `gateway completion bash|zsh|fish`: prints a completion script for the shell.
import { Command, Argument } from 'commander';
import { bashCompletion, fishCompletion, zshCompletion } from '../lib/completion.ts';
import { print } from '../lib/output.ts';

export function completionCommand(program: Command): Command {
  return new Command('completion')
    .description('print a shell completion script')
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh', 'fish']))
    .addHelpText(
      'after',
      [
        '',
        'Install:',
        '  bash: echo \'eval "$(npx gateway completion bash)"\' >> ~/.bashrc',
        '  zsh:  echo \'eval "$(npx gateway completion zsh)"\' >> ~/.zshrc',
        '  fish: npx gateway completion fish > ~/.config/fish/completions/gateway.fish',
        'bash and zsh complete both `gateway …` and `npx gateway …`. fish completes `gateway …`:',
        'put the command on your PATH with `npm link` (or `alias gateway "npx gateway"`).',
      ].join('\n'),
    )
    .action((shell: 'bash' | 'zsh' | 'fish') => print({ bash: bashCompletion, zsh: zshCompletion, fish: fishCompletion }[shell](program)));
}
