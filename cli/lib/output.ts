// Where output goes: results on stdout (what scripts read), everything for people on stderr.
// Colour only on a terminal and never with NO_COLOR (util.styleText checks both for its stream).
import { styleText } from 'node:util';

type Style = Parameters<typeof styleText>[0];

const paint = (stream: NodeJS.WriteStream) => (style: Style, text: string) =>
  process.env.NO_COLOR ? text : styleText(style, text, { stream });

/** Colours for stdout (tables) and stderr (notes). */
export const out = paint(process.stdout);
export const note = paint(process.stderr);

export const print = (text: string) => void process.stdout.write(text.endsWith('\n') ? text : text + '\n');
export const say = (text: string) => void process.stderr.write(text.endsWith('\n') ? text : text + '\n');
export const printJson = (value: unknown) => print(JSON.stringify(value, null, 2));

export function riskColour(risk: string): Style {
  return risk === 'high' || risk === 'delete' ? 'red' : risk === 'med' || risk === 'write' ? 'yellow' : 'green';
}
