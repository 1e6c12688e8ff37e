/**
 * Rows under a header, each column padded to its widest cell, two spaces apart; the last column is not padded (it
 * holds free text: a prompt, an input).
 */
export function formatTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
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
