// `gateway completion bash|zsh|fish`: prints a completion script for the shell.
import { Command, Argument } from 'commander';
import { bashCompletion, fishCompletion, zshCompletion } from '../lib/completion.ts';
import { print } from '../lib/output.ts';

export function completionCommand(program: Command): Command {
  return new Command('completion')
    .description('print a shell completion script')
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh', 'fish']))
    .addHelpText('after', '\nInstall:\n  bash: echo \'eval "$(npx gateway completion bash)"\' >> ~/.bashrc\n  zsh:  echo \'eval "$(npx gateway completion zsh)"\' >> ~/.zshrc\n  fish: npx gateway completion fish > ~/.config/fish/completions/gateway.fish')
    .action((shell: 'bash' | 'zsh' | 'fish') => print({ bash: bashCompletion, zsh: zshCompletion, fish: fishCompletion }[shell](program)));
}
