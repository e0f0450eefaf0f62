// axe-core, run in the page as it is now: the browser tests' accessibility scan.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  readonly id: string;
  readonly impact: string;
  /** The elements found, as axe names them. */
  readonly targets: string;
}

/** Every violation axe-core finds on the page now (axe injected once per page). */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE);
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: unknown) => Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: unknown }> }> }> } }).axe;
    return (await axe.run(document)).violations.map((v) => ({ id: v.id, impact: v.impact, targets: JSON.stringify(v.nodes.map((n) => n.target)) }));
  });
}

/** The serious and critical ones: what the portal's tests hold at none. */
export const seriousOrCritical = (violations: readonly AxeViolation[]): AxeViolation[] => violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
