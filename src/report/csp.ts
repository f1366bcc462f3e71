/**
 * The page's Content-Security-Policy: nothing remote, no eval. Inline scripts and the style
 * element are allowed by the SHA-256 of their exact text, computed at render time.
 */
import { createHash } from 'node:crypto';

export function sha256(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/**
 * Example: contentSecurityPolicy(['a'], ['b']) starts with
 * "default-src 'none'; script-src 'sha256-ypeBEsobvcr6wjGzmiPcTaeG7/gUfE5yuYB3ha/uSLs='; …".
 * No style attributes are allowed: vega sets its few inline styles through the CSSOM, which
 * CSP does not govern, and the browser tests fail on any CSP violation.
 */
export function contentSecurityPolicy(scripts: string[], styles: string[]): string {
  return [
    "default-src 'none'",
    `script-src ${scripts.map(sha256).join(' ')}`,
    `style-src ${styles.map(sha256).join(' ')}`,
    'img-src data:',
    'font-src data:',
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}
