// What the documentation check reads in a Markdown file: its runnable command blocks, its links,
// the anchors its headings make (as GitHub renders them, so a link's `#fragment` resolves there),
// and the repository's paths it names in inline code.

/** A fenced block whose info string is `sh runnable` or `bash runnable`: commands a reader runs as written. */
export interface RunnableBlock {
  readonly line: number;
  readonly script: string;
}

const FENCE = /^(`{3,}|~{3,})(.*)$/;

export function runnableBlocks(markdown: string): RunnableBlock[] {
  const blocks: RunnableBlock[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    const [, fence, info] = open;
    const end = lines.findIndex((l, j) => j > i && l.startsWith(fence!) && l.slice(fence!.length).trim() === '');
    const close = end === -1 ? lines.length : end;
    const words = info!.trim().split(/\s+/);
    if ((words[0] === 'sh' || words[0] === 'bash') && words.includes('runnable')) blocks.push({ line: i + 1, script: lines.slice(i + 1, close).join('\n') });
    i = close;
  }
  return blocks;
}

/** The text outside fenced blocks and inline code, where a link means a link. */
function prose(markdown: string, keepCode = false): string {
  const out: string[] = [];
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const open = FENCE.exec(line);
    if (fence) {
      if (line.startsWith(fence) && line.slice(fence.length).trim() === '') fence = undefined;
      out.push('');
    } else if (open) {
      fence = open[1];
      out.push('');
    } else out.push(keepCode ? line : line.replace(/`[^`]*`/g, '``'));
  }
  return out.join('\n');
}

export interface Link {
  readonly line: number;
  readonly target: string;
}

/** Every inline link and image target, `[text](target)` and `![alt](target "title")`. */
export function links(markdown: string): Link[] {
  const found: Link[] = [];
  prose(markdown)
    .split('\n')
    .forEach((text, i) => {
      for (const m of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) found.push({ line: i + 1, target: m[1]! });
    });
  return found;
}

export interface NamedPath {
  readonly line: number;
  readonly path: string;
}

/**
 * Every inline code span of the prose that is a path from the repository's root alone, such as
 * `core/config.ts` or `handlers/http/`: its first folder one of `folders`, nothing but a path's
 * characters in it. What a build writes (a `dist` folder) is no source, and is left out.
 */
export function repoPaths(markdown: string, folders: readonly string[]): NamedPath[] {
  const found: NamedPath[] = [];
  prose(markdown, true)
    .split('\n')
    .forEach((text, i) => {
      for (const [, code] of text.matchAll(/`([^`]+)`/g)) {
        const segments = code!.split('/');
        if (/^[\w.-]+(\/[\w.-]+)*\/?$/.test(code!) && segments.length > 1 && folders.includes(segments[0]!) && !segments.includes('dist')) found.push({ line: i + 1, path: code! });
      }
    });
  return found;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const line of prose(markdown, true).split('\n')) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = heading[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    result.add(n === 0 ? base : `${base}-${n}`);
  }
  return result;
}
