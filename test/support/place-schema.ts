/** The JSON Schema the structured-output tests ask answers to follow: an object with a city, nothing else. */
export const placeSchema = {
  type: 'object',
  properties: { city: { type: 'string' } },
  required: ['city'],
  additionalProperties: false,
};
