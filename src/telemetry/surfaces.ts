/** The surfaces whose requests generate (and list what generates): where bodies are prompts and media. */
export const modelSurfaces: ReadonlySet<string> = new Set(['alpha', 'beta', 'gamma', 'native']);

/** The surface a route belongs to, from its path template: a small, fixed set of label values. */
export function surfaceOf(route: string): string {
  if (route.startsWith('/api/alpha')) return 'alpha';
  if (route.startsWith('/api/beta')) return 'beta';
  if (route.startsWith('/api/gamma')) return 'gamma';
  if (route.startsWith('/api/compat/')) return 'compat';
  if (route.startsWith('/api/admin/')) return 'admin';
  if (route.startsWith('/api/operator/')) return 'operator';
  // The signed download links under /api/v1/media/files are the native surface's, not the account API's.
  if (/^\/api\/v1\/(auth|account|api-keys|usage|media(?!\/files))(\/|$)/.test(route)) return 'account';
  if (route.startsWith('/api/v1/')) return 'native';
  return 'other';
}
