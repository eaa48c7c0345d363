/**
 * A rendered template's text made tidy: each line's trailing spaces and tabs
 * dropped, runs of blank lines (left by block helpers and comments) cut to
 * one, the whole trimmed, one final newline.
 *
 * One pass over the lines, each piece kept a slice of the output: no
 * regular expression (`/[ \t]+$/gm` backtracks quadratically on a long run
 * of spaces: a variable of 30,000 spaces froze the event loop for seconds),
 * and no intermediate joined copy of the whole text to search again. It
 * runs on every send (about a third of the invoice's render time when it
 * was four passes).
 */
export function tidy(output: string): string {
  const lines = output.split('\n');
  const kept: string[] = [];
  let blankBefore = false;
  for (const line of lines) {
    // "-- " alone on its line is the signature delimiter (RFC 3676): mail clients set the footer after it apart.
    const trimmed = line === '-- ' ? line : trimTrailingBlanks(line);
    const blank = trimmed.length === 0;
    // A second blank line in a row would make three newlines in a row: at most two are kept.
    if (blank && blankBefore) continue;
    blankBefore = blank;
    kept.push(trimmed);
  }
  return `${kept.join('\n').trim()}\n`;
}

function trimTrailingBlanks(line: string): string {
  let end = line.length;
  while (end > 0 && (line.charCodeAt(end - 1) === 32 || line.charCodeAt(end - 1) === 9)) end--;
  return end === line.length ? line : line.slice(0, end);
}
