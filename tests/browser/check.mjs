// Renders routesim outputs in headless Chromium and prints one JSON line with what it saw.
//
//   node check.mjs mermaid <diagram.mmd> <screenshot.png>
//   node check.mjs mermaids <dir of .mmd> <dir for screenshots>   (one browser for them all)
//   node check.mjs report  <report.html> <screenshot.png>
//   node check.mjs sweep   <sweep.html> <screenshot.png>
//
// Mermaid is loaded from node_modules on disk, never from a CDN; Chromium is Debian's
// (/usr/bin/chromium), started with the flags this closed network needs.
import { chromium } from 'playwright-core';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join, resolve } from 'node:path';

const [mode, input, screenshot] = process.argv.slice(2);
const here = dirname(fileURLToPath(import.meta.url));
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
const errors = [];
page.on('console', m => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
page.on('pageerror', e => errors.push(`page: ${e.message}`));
page.on('requestfailed', r => errors.push(`request failed: ${r.url()}`));

let result;
async function renderMermaid(text) {
  return await page.evaluate(async (text) => {
    try {
      window.mermaid.initialize({ startOnLoad: false, securityLevel: 'strict' });
      const { svg } = await window.mermaid.render('diagram', text);
      document.getElementById('out').innerHTML = svg;
      const el = document.querySelector('#out svg');
      // Mermaid draws a refusal ("Maximum text size in diagram exceeded") as a diagram of its own.
      const refused = el ? /Maximum text size|Syntax error/i.test(el.textContent) : false;
      return { svg: !!el && !refused, messages: el ? el.querySelectorAll('.messageText').length : 0,
               error: refused ? el.textContent.slice(0, 200) : null };
    } catch (e) {
      return { svg: false, messages: 0, error: String(e && e.message || e) };
    }
  }, text);
}

if (mode === 'mermaid' || mode === 'mermaids') {
  await page.goto(pathToFileURL(join(here, 'mermaid.html')).href);
  await page.waitForFunction(() => window.mermaid !== undefined, null, { timeout: 10000 });
  if (mode === 'mermaid') {
    result = await renderMermaid(readFileSync(resolve(input), 'utf8'));
  } else {
    result = { diagrams: {} };
    for (const name of readdirSync(resolve(input)).filter(n => n.endsWith('.mmd')).sort()) {
      const r = await renderMermaid(readFileSync(join(resolve(input), name), 'utf8'));
      r.errors = errors.splice(0);
      result.diagrams[name] = r;
      await page.screenshot({ path: join(resolve(screenshot), name.replace(/\.mmd$/, '.png')), fullPage: true });
    }
  }
} else if (mode === 'report') {
  await page.goto(pathToFileURL(resolve(input)).href);
  result = await page.evaluate(() => {
  const shown = e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const overlaps = es => {
    const rs = es.map(e => e.getBoundingClientRect());
    return rs.filter((a, i) => rs.some((b, j) => j > i && a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom)).length;
  };
  return {
    lanes: [...document.querySelectorAll('[data-lane]')].map(e => e.getAttribute('data-lane')),
    marks: document.querySelectorAll('[data-t]').length,
    svg: !!document.querySelector('svg'),
    // Per producer: the start of each bucket drawn in each chart class.
    charts: [...document.querySelectorAll('rect.chart')].reduce((acc, r) => {
      const p = acc[r.getAttribute('data-producer')] ??= {};
      const cls = [...r.classList].find(c => c !== 'chart');
      (p[cls] ??= []).push(Number(r.getAttribute('data-from')));
      return acc;
    }, {}),
    untitledCharts: [...document.querySelectorAll('rect.chart')].filter(r => !r.querySelector('title')).length,
    legend: document.querySelector('.legend')?.textContent ?? '',
    // What a screenshot shows without hovering: each text must be rendered (a box with room),
    // and a lane's label must fit its column rather than run off its edge.
    legendEntries: [...document.querySelectorAll('.legend .entry')].filter(shown).map(e => e.textContent),
    faultLabels: [...document.querySelectorAll('#faults .flabel')].filter(shown)
      .map(e => ({ text: e.textContent, at: Number(e.dataset.at) })),
    overlappingFaultLabels: overlaps([...document.querySelectorAll('#faults .flabel')].filter(shown)),
    laneTexts: [...document.querySelectorAll('#lanes g.lane:not(.folded) text')].map(t => ({
      text: [...t.querySelectorAll('tspan')].map(s => s.textContent.trim()).join(' '),
      fits: t.getBBox().width > 0 && t.getBBox().x + t.getBBox().width <= t.closest('svg').width.baseVal.value,
    })),
    steadyLanes: document.querySelectorAll('#lanes g.lane.steady').length,
    moments: [...document.querySelectorAll('#moments li.moment')].filter(shown).map(li => li.textContent),
  };
  });
  // Click a key moment (the first whose story is a fault, else the first): the chart must mark
  // its instant with a visible line.
  const moments = await page.$$('#moments li.moment');
  if (moments.length) {
    const stories = await Promise.all(moments.map(m => m.$eval('.story', s => s.textContent)));
    const pick = Math.max(0, stories.findIndex(t => t.startsWith('FAULT ')));
    await moments[pick].click();
    result.highlightAfterClick = await page.evaluate(() => {
      const c = document.getElementById('cursor'), li = document.querySelector('.moment.selected');
      return { at: li ? Number(li.dataset.at) : null, cursor: Number(c.getAttribute('x1')),
               visible: c.getAttribute('visibility') !== 'hidden' && c.getBoundingClientRect().height > 0 };
    });
  }
  // Unfold and fold the unchanging lanes: the count of lanes shown must change and come back.
  if (await page.$('#fold')) {
    const count = () => page.evaluate(() => document.querySelectorAll('#lanes g.lane:not(.folded)').length);
    const before = await count();
    await page.click('#fold');
    const after = await count();
    await page.click('#fold');
    result.foldToggle = { before, after, back: await count() };
  }
  // Zoom in and out once, as a reader would: the handlers must not throw.
  await page.mouse.move(700, 300);
  await page.mouse.wheel(0, -400);
  await page.mouse.wheel(0, 400);
} else if (mode === 'sweep') {
  await page.goto(pathToFileURL(resolve(input)).href);
  result = await page.evaluate(() => ({
    charts: [...document.querySelectorAll('svg[data-expect]')].map(svg => ({
      expect: svg.getAttribute('data-expect'),
      runs: [...svg.querySelectorAll('rect.bin')].reduce((n, r) => n + Number(r.getAttribute('data-count')), 0),
      quantiles: [...svg.querySelectorAll('line.quantile')].map(l => l.getAttribute('data-q')),
      // Every label must sit inside the chart: a cut-off label says nothing in a screenshot.
      clipped: [...svg.querySelectorAll('text')].filter(t => {
        const b = t.getBBox(), v = svg.viewBox.baseVal;
        return b.x < v.x - 0.5 || b.x + b.width > v.x + v.width + 0.5;
      }).length,
    })),
    text: document.body.innerText,
  }));
} else {
  console.error(`unknown mode ${mode}`);
  process.exit(2);
}
if (screenshot && mode !== 'mermaids') await page.screenshot({ path: screenshot, fullPage: true });
await browser.close();
console.log(JSON.stringify({ ...result, errors }));
