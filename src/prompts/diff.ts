// Line diff between two versions (LCS after trimming the common head and tail). Inputs whose
// differing middle would need more than MAX_CELLS comparisons are shown as a block replacement:
// still correct, just not minimal.

export interface DiffLine {
  op: 'equal' | 'add' | 'remove';
  line: string;
}

const MAX_CELLS = 4_000_000;

export function diffLines(a: string[], b: string[]): DiffLine[] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const x = a.slice(head, a.length - tail);
  const y = b.slice(head, b.length - tail);
  const middle: DiffLine[] = [];
  if (x.length * y.length > MAX_CELLS) {
    for (const line of x) middle.push({ op: 'remove', line });
    for (const line of y) middle.push({ op: 'add', line });
  } else {
    // lcs[i][j] = LCS length of x[i..] and y[j..], in one flat array
    const w = y.length + 1;
    const lcs = new Uint32Array((x.length + 1) * w);
    for (let i = x.length - 1; i >= 0; i--) {
      for (let j = y.length - 1; j >= 0; j--) {
        lcs[i * w + j] = x[i] === y[j] ? lcs[(i + 1) * w + j + 1]! + 1 : Math.max(lcs[(i + 1) * w + j]!, lcs[i * w + j + 1]!);
      }
    }
    let i = 0;
    let j = 0;
    while (i < x.length || j < y.length) {
      if (i < x.length && j < y.length && x[i] === y[j]) {
        middle.push({ op: 'equal', line: x[i]! });
        i++;
        j++;
      } else if (i < x.length && (j === y.length || lcs[(i + 1) * w + j]! >= lcs[i * w + j + 1]!)) {
        middle.push({ op: 'remove', line: x[i++]! }); // removals first, as in a unified diff
      } else {
        middle.push({ op: 'add', line: y[j++]! });
      }
    }
  }
  return [
    ...a.slice(0, head).map((line) => ({ op: 'equal' as const, line })),
    ...middle,
    ...a.slice(a.length - tail).map((line) => ({ op: 'equal' as const, line })),
  ];
}

export function unified(lines: DiffLine[]): string {
  return lines.map((l) => `${l.op === 'add' ? '+' : l.op === 'remove' ? '-' : ' '}${l.line}`).join('\n');
}
