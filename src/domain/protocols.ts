/** Wire protocol families an upstream provider can speak. */
export const protocols = ['openai', 'anthropic', 'gemini', 'ark', 'speech', 'sandbox'] as const;
export type Protocol = (typeof protocols)[number];
