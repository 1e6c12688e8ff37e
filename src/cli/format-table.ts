/**
 * Rows under a header, each column padded to its widest cell, two spaces apart; the last column is not padded (it
 * holds free text: a prompt, an input). A cell's line breaks would split its row, so each shows on one line.
 */
export function formatTable(header: readonly string[], cells: ReadonlyArray<readonly string[]>): string {
  const rows = cells.map((row) => row.map(oneLine));
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  return [header, ...rows]
    .map((row) =>
      row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0))).join('  '),
    )
    .join('\n')
    .concat('\n');
}

/** The text on one line: each run of white space in it, line breaks included, as one space. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ');
}
