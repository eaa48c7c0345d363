# One image for both processes; docker-compose.yml picks the command:
#   api:    node --import tsx api/server.ts      (the default CMD)
#   worker: node --import tsx worker/worker.ts
# TypeScript runs through tsx (a runtime dependency), so there is no compile step;
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
CMD ["node", "--import", "tsx", "api/server.ts"]
