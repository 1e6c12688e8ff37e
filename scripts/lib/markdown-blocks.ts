/** A `<!-- name: value -->` comment on the line just above a fence, telling a checker what to do with the block. */
export interface BlockMarker {
  name: string;
  value: string;
}

/** One fenced code block of a Markdown file. */
export interface MarkdownBlock {
  /** The Markdown file, as given to {@link readMarkdownBlocks}. */
  file: string;
  /** The fence's language, lower case (`ts`, `sh`, …; empty when none is given). */
  language: string;
  code: string;
  /** The 1-based line of the block's first code line. */
  line: number;
  /** The text of the nearest heading above the block. */
  section: string;
  /** The headings the block sits under, outermost first (`['Relay-E', 'Five-minute tour', 'Approve']`). */
  sections: string[];
  marker?: BlockMarker;
}

const fencePattern = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)/;
const headingPattern = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const markerPattern = /^\s*<!--\s*([a-z-]+)\s*:\s*(.*?)\s*-->\s*$/;

/** The fenced code blocks of a Markdown text, with the heading each sits under and the marker just above it. */
export function readMarkdownBlocks(file: string, text: string): MarkdownBlock[] {
  const lines = text.split('\n');
  const blocks: MarkdownBlock[] = [];
  const sections: string[] = [];
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] ?? '';
    const heading = headingPattern.exec(line);
    if (heading) {
      sections.length = Math.min(sections.length, (heading[1] ?? '#').length - 1);
      sections.push(heading[2] ?? '');
      continue;
    }
    const fence = fencePattern.exec(line);
    if (!fence) continue;
    const [, opening = '', language = ''] = fence;
    const start = index + 1;
    let end = start;
    while (end < lines.length && !isClosingFence(lines[end] ?? '', opening)) end++;
    const marker = markerAbove(lines, index);
    blocks.push({
      file,
      language: language.toLowerCase(),
      code: lines.slice(start, end).join('\n'),
      line: start + 1,
      section: sections.at(-1) ?? '',
      sections: [...sections],
      ...(marker ? { marker } : {}),
    });
    index = end;
  }
  return blocks;
}

function isClosingFence(line: string, opening: string): boolean {
  const trimmed = line.trim();
  return trimmed.length >= opening.length && trimmed === (opening[0] ?? '`').repeat(trimmed.length);
}

/** The marker comment on the nearest non-blank line above the fence, if that line is one. */
function markerAbove(lines: readonly string[], fenceIndex: number): BlockMarker | undefined {
  let index = fenceIndex - 1;
  while (index >= 0 && (lines[index] ?? '').trim() === '') index--;
  const match = markerPattern.exec(lines[index] ?? '');
  return match ? { name: match[1] ?? '', value: match[2] ?? '' } : undefined;
}
