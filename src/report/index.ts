/**
 * The HTML report, for the CLI: build a `ReportData` from the analyses, then
 * `writeReport(data, outPath)` (or `renderReport(data)` for the HTML string).
 */
export { renderReport, writeReport } from './render.js';
export { compileCharts } from './charts.js';
export * from './data.js';
