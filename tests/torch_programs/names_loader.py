"""A character model of names in the makemore lectures' style, fed by a DataLoader: three
letters of context predict the next one. A Dataset of (context, next letter) tensors, split
with random_split, shuffled batches fetched by two worker processes, an embedding and an
MLP trained with AdamW under a StepLR schedule with gradient clipping, the losses logged to
TensorBoard and read back, the validation loss computed under inference_mode."""
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torch.utils.tensorboard import SummaryWriter

NAMES = """ada alma anouk arlo bea bodhi cleo corin dara eli elowen fenna finn gus hana ines
ivo jora juno kai lena lior mara milo nell noa odin orla pim quinn rafe rosa sami tova ulla
vera wren xan yara zeno""".split()  # noqa: SIM905 - a list to read
BLOCK = 3  # letters of context
letters = sorted(set("".join(NAMES)))
stoi = {ch: i + 1 for i, ch in enumerate(letters)}  # 0 is '.', the start and the end
vocab_size = len(letters) + 1


class NextLetter(Dataset):
    """Every (three letters, the next) of the names, as int64 tensors."""

    def __init__(self, names):
        self.pairs = []
        for name in names:
            context = [0] * BLOCK
            for ch in name + ".":
                ix = stoi.get(ch, 0)
                self.pairs.append((list(context), ix))
                context = context[1:] + [ix]

    def __len__(self):
        return len(self.pairs)

    def __getitem__(self, i):
        context, target = self.pairs[i]
        return torch.tensor(context), torch.tensor(target)


torch.manual_seed(2147483647)
torch.cuda.manual_seed_all(2147483647)  # as the lectures do; no GPU here
dataset = NextLetter(NAMES)
train, val = torch.utils.data.random_split(dataset, [0.8, 0.2])
print("pairs", len(dataset), "train", len(train), "val", len(val), "first", train.indices[:5])

model = nn.Sequential(nn.Embedding(vocab_size, 6), nn.Flatten(), nn.Linear(BLOCK * 6, 48),
                      nn.Tanh(), nn.Linear(48, vocab_size))
optimizer = torch.optim.AdamW(model.parameters(), lr=0.02, weight_decay=0.01)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
loader = DataLoader(train, batch_size=32, shuffle=True, num_workers=2)
print("batches per epoch", len(loader))

log_dir = tempfile.mkdtemp()
step = 0
with SummaryWriter(log_dir) as writer:
    for epoch in range(3):
        for x, y in loader:
            logits = model(x)
            loss = F.cross_entropy(logits, y)
            optimizer.zero_grad()
            loss.backward()
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.7)
            optimizer.step()
            writer.add_scalar("loss/train", loss.item(), step)
            print("step", step, "batch", x.shape[0], y[:4].tolist(), "loss", loss.item(),
                  "grad norm", norm.item())
            step += 1
        scheduler.step()
        print("epoch", epoch, "lr", scheduler.get_last_lr()[0])
        writer.add_histogram("weights/out", model[4].weight, epoch)
    writer.add_text("summary", f"{step} steps")

with torch.inference_mode():
    xs, ys = next(iter(DataLoader(val, batch_size=len(val))))
    val_loss = F.cross_entropy(model(xs), ys)
print("val loss", val_loss.item(), "inference mode after", torch.is_inference_mode_enabled())

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402

events = EventAccumulator(log_dir, size_guidance={"scalars": 0, "histograms": 0})
events.Reload()
logged = events.Scalars("loss/train")
print("logged", len(logged), "steps", [e.step for e in logged][:3], "last", logged[-1].value)
print("histograms", [e.step for e in events.Histograms("weights/out")])
print("event files", sum(f.startswith("events.out.tfevents.") for f in os.listdir(log_dir)))
print("after the loop", torch.rand(2).tolist())
