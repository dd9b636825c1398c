// A phone for the browser tests: its viewport, and checks of what a person on it can see without
// scrolling sideways.
import type { Locator } from 'playwright-core';

export const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 } as const;

/** Runs in the page: how wide the document is (wider than the viewport means sideways scrolling). */
export const pageWidth = () => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth;

/**
 * Whether a person sees the element and can tap it: the page is scrolled (vertically only) to
 * bring it into view, then the point at its centre must be inside the viewport and hit the element
 * itself, not something covering it or a scrolling container that clips it. Answers `on screen`,
 * or what is wrong (for the failure message).
 */
export function onScreen(l: Locator): Promise<string> {
  return l.evaluate((el: any) => {
    const g = globalThis as any;
    const before = el.getBoundingClientRect();
    g.scrollBy(0, before.top + before.height / 2 - g.innerHeight / 2);
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) return 'not rendered';
    if (r.left < 0 || r.right > g.innerWidth) return `outside the viewport: ${Math.round(r.left)}..${Math.round(r.right)} of ${g.innerWidth}`;
    const hit = g.document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    if (hit === null || !(hit === el || el.contains(hit))) return `covered or clipped: the point hits ${hit ? String(hit.outerHTML).slice(0, 120) : 'nothing'}`;
    return 'on screen';
  });
}
