// The images attached to the message being written: read as data: URLs, previewed above the
// prompt (each with a button that removes it) and taken by the message when it is sent. The
// attach button shows only while the chosen model takes images.

const $ = (id) => document.getElementById(id);
let pending = [];  // data: URLs, in the order attached

function previewElement(url, index) {
  const item = document.createElement("div");
  item.className = "attachment";
  const img = document.createElement("img");
  img.src = url;
  img.alt = "attached image";
  const remove = document.createElement("button");
  remove.type = "button";
  remove.className = "remove";
  remove.title = "Remove this image";
  remove.textContent = "×";
  remove.addEventListener("click", () => { pending.splice(index, 1); render(); });
  item.append(img, remove);
  return item;
}

function render() {
  $("attachments").replaceChildren(...pending.map(previewElement));
  $("attachments").hidden = pending.length === 0;
}

function readAsDataUrl(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

// A model without image input drops what was attached for another.
export function showAttachButton(on) {
  $("attach").hidden = !on;
  if (!on && pending.length) takeImages();
}

export function hasImages() {
  return pending.length > 0;
}

export function takeImages() {
  const images = pending;
  pending = [];
  render();
  return images;
}

export function wireAttachments(onError) {
  $("attach").addEventListener("click", () => $("image-input").click());
  $("image-input").addEventListener("change", async (e) => {
    const files = [...e.target.files];
    e.target.value = "";  // picking the same file again fires another change
    try {
      pending.push(...await Promise.all(files.map(readAsDataUrl)));
    } catch (error) {
      onError(`Could not read the image (${error?.message ?? error}).`);
    }
    render();
  });
}
