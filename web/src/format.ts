/**
 * USD for display, exact to the nano-dollar the gateway counts in: at least cents, and every further digit
 * that is not zero, so a balance visibly moves by the smallest charge.
 */
export function usd(amount: number): string {
  const sign = amount < 0 ? '-' : '';
  const [whole = '0', fraction = ''] = Math.abs(amount).toFixed(9).split('.');
  return `${sign}$${Number(whole).toLocaleString('en-US')}.${fraction.replace(/0+$/, '').padEnd(2, '0')}`;
}

export function dateTime(iso: string): string {
  return `${new Date(iso).toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' })} UTC`;
}

export function bytes(count: number): string {
  if (count < 1024) return `${count} B`;
  if (count < 1024 * 1024) return `${(count / 1024).toFixed(1)} KiB`;
  return `${(count / 1024 / 1024).toFixed(1)} MiB`;
}
