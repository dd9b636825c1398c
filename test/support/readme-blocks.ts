// The shell blocks of a Markdown document (```sh, ```bash, ```shell), as the README test runs
// them. A block that cannot run in a test is marked just before its fence, visibly in the source:
// `<!-- not-tested: why -->`. Pure: text in, blocks out.

export interface ShellBlock {
  /** 1-based line of the opening fence. */
  line: number;
  code: string;
  /** The marker's reason: present when the block is not run. */
  notTested?: string;
}

const SHELL_FENCE = /^```(sh|bash|shell)\s*$/;
const ANY_FENCE = /^```/;
const MARKER = /^<!--\s*not-tested:(.*?)-->\s*$/;

export function shellBlocks(markdown: string): ShellBlock[] {
  const lines = markdown.split('\n');
  const blocks: ShellBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!ANY_FENCE.test(lines[i]!)) continue;
    const shell = SHELL_FENCE.test(lines[i]!);
    const start = i;
    let end = i + 1;
    while (end < lines.length && !/^```\s*$/.test(lines[end]!)) end++;
    if (end === lines.length) throw new Error(`line ${start + 1}: a code block is never closed`);
    if (shell) {
      let before = start - 1;
      while (before >= 0 && lines[before]!.trim() === '') before--;
      const marker = before >= 0 ? MARKER.exec(lines[before]!.trim()) : null;
      if (marker && !marker[1]!.trim()) throw new Error(`line ${before + 1}: a not-tested marker needs its reason`);
      blocks.push({ line: start + 1, code: lines.slice(start + 1, end).join('\n'), ...(marker ? { notTested: marker[1]!.trim() } : {}) });
    }
    i = end;
  }
  return blocks;
}
