// A streaming CSV reader (RFC 4180: comma-separated, fields quoted with " and "" inside quotes,
// CRLF or LF line ends, quoted fields may span lines). Records come out one at a time with the
// line they start on, so memory holds one record whatever the file's size. A malformed record (a
// quote inside an unquoted field, text after a closing quote, a record over the size limit, an
// unclosed quote at the end) comes out as an error for its line; reading resumes at the next line.

export type CsvRecord = { line: number; fields: string[] } | { line: number; error: string };

export async function* csvRecords(text: AsyncIterable<string>, maxRecordChars: number): AsyncGenerator<CsvRecord> {
  let fields: string[] = [];
  let field = '';
  let size = 0;
  let inQuotes = false;
  let quotePending = false; // a " seen inside quotes: an escaped quote or the closing one
  let closed = false; // after a closing quote: only a comma or a line end may follow
  let error: string | undefined;
  let line = 1; // the line being read
  let start = 1; // the line the record started on
  let fresh = true; // nothing read of this record yet

  const reset = () => {
    fields = [];
    field = '';
    size = 0;
    inQuotes = quotePending = closed = false;
    error = undefined;
    fresh = true;
  };

  for await (const chunk of text) {
    const out: CsvRecord[] = [];
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i]!;
      if (fresh) {
        start = line;
        fresh = false;
      }
      if (quotePending) {
        quotePending = false;
        if (c === '"') {
          field += '"';
          continue;
        }
        inQuotes = false;
        closed = true;
      }
      if (error !== undefined) {
        // Skip to the end of the physical line, then report the record.
        if (c === '\n') {
          out.push({ line: start, error });
          line++;
          reset();
        }
        continue;
      }
      if (inQuotes) {
        if (c === '"') quotePending = true;
        else {
          if (c === '\n') line++;
          field += c;
          if (++size > maxRecordChars) error = `longer than ${maxRecordChars} characters`;
        }
        continue;
      }
      if (c === '\r') continue;
      if (c === ',' || c === '\n') {
        fields.push(field);
        field = '';
        closed = false;
        if (c === '\n') {
          // A blank line is no record.
          if (!(fields.length === 1 && fields[0] === '' && size === 0)) out.push({ line: start, fields });
          line++;
          reset();
        }
        continue;
      }
      if (closed) {
        error = 'text after a closing quote (a quoted field must end at a comma or the line end)';
        continue;
      }
      if (c === '"') {
        if (field !== '') error = 'a quote inside an unquoted field (quote the whole field and double the quote)';
        else inQuotes = true;
        continue;
      }
      field += c;
      if (++size > maxRecordChars) error = `longer than ${maxRecordChars} characters`;
    }
    yield* out;
  }
  if (quotePending) {
    inQuotes = false;
  }
  if (fresh) return;
  if (error !== undefined) yield { line: start, error };
  else if (inQuotes) yield { line: start, error: 'a quoted field is not closed before the end of the file' };
  else {
    fields.push(field);
    if (!(fields.length === 1 && fields[0] === '')) yield { line: start, fields };
  }
}
