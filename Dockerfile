# One image for both processes; docker-compose.yml picks the command:
#   api:    node bin/run-ts.mjs api/server.ts      (the default CMD)
#   worker: node bin/run-ts.mjs worker/worker.ts
# TypeScript runs through tsx (a runtime dependency; bin/run-ts.mjs registers it in
# the main thread only), so there is no compile step;
# the workflow bundle is built here once so workers start without webpack.
FROM node:20-bookworm-slim

WORKDIR /app
ENV NODE_ENV=production

# Dependencies first: this layer is reused until package*.json change.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

COPY . .
RUN npm run build:workflows
ENV WORKFLOW_BUNDLE_PATH=/app/dist/workflow-bundle.js

USER node
EXPOSE 3000
CMD ["node", "bin/run-ts.mjs", "api/server.ts"]
