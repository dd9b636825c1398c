// The links of a Markdown document and the anchors its headings make, as GitHub renders them, so a
// test can check that every relative link in the README and the guides resolves. Pure: text in,
// links and anchors out.

export interface MarkdownLink {
  /** 1-based line of the link. */
  line: number;
  target: string;
}

const FENCE = /^\s*```/;
// [text](target) and ![alt](target); the target ends at the first space or closing parenthesis.
const LINK = /!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g;
const INLINE_CODE = /`[^`]*`/g;

/** Every inline link and image outside code blocks and code spans. */
export function markdownLinks(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  let inFence = false;
  markdown.split('\n').forEach((text, i) => {
    if (FENCE.test(text)) inFence = !inFence;
    if (inFence || FENCE.test(text)) return;
    for (const m of text.replace(INLINE_CODE, '').matchAll(LINK)) links.push({ line: i + 1, target: m[1]! });
  });
  return links;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, each space a hyphen. */
export function headingSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors a document's headings make; a repeated heading gets `-1`, `-2`, … as on GitHub. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let inFence = false;
  for (const text of markdown.split('\n')) {
    if (FENCE.test(text)) inFence = !inFence;
    const heading = !inFence && /^#{1,6}\s+(.*)$/.exec(text);
    if (!heading) continue;
    const slug = headingSlug(heading[1]!);
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}
